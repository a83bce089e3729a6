package dashboards

// measureJS reads the drawn topology back from the page, in screen pixels:
// each link's length outside every node box, its points at a quarter,
// half and three quarters of its length, the node pair it joins (from its
// tooltip "a:p ↔ b:q"); each lit queue marker's overlap with any box and
// how far its edge is (in the drawing's units) from the half of its
// port's link by the port; each timeline
// number's box against the list's.
const measureJS = `(() => {
  const svg = document.getElementById("topo");
  const m = svg.getScreenCTM(), k = Math.hypot(m.a, m.b);
  const rects = [...svg.querySelectorAll("#boxes rect")].map((r) => {
    const b = r.getBBox(); return { x: b.x, y: b.y, w: b.width, h: b.height };
  });
  const inside = (p, r) => p.x > r.x && p.x < r.x + r.w && p.y > r.y && p.y < r.y + r.h;
  const links = [...svg.querySelectorAll(".link")].map((p) => {
    const title = (p.querySelector("title") || {}).textContent || "";
    const [a, b] = title.split(" ↔ ");
    const len = p.getTotalLength();
    let vis = 0;
    for (let s = 0.5; s < len; s += 1) if (!rects.some((r) => inside(p.getPointAtLength(s), r))) vis++;
    const at = (f) => { const q = p.getPointAtLength(len * f); return [q.x * k, q.y * k]; };
    const e0 = p.getPointAtLength(0), e1 = p.getPointAtLength(len);
    return { a, b, pair: [a.split(":")[0], b.split(":")[0]].sort().join("|"), visible_px: vis * k,
      points: [at(0.25), at(0.5), at(0.75)], ends: [[e0.x, e0.y], [e1.x, e1.y]], len };
  });
  const queues = [...svg.querySelectorAll("circle.qdot")].filter((c) => Number(c.getAttribute("r")) > 0).map((c) => {
    const x = Number(c.getAttribute("cx")), y = Number(c.getAttribute("cy")), r = Number(c.getAttribute("r"));
    // The disk's overlap with a box: how far into the nearest box it reaches.
    let into = -Infinity;
    for (const b of rects) {
      const dx = Math.max(b.x - x, 0, x - b.x - b.w), dy = Math.max(b.y - y, 0, y - b.y - b.h);
      into = Math.max(into, r - Math.hypot(dx, dy));
    }
    const port = (c.querySelector("title") || {}).textContent.split(": ")[0];
    // How far the disk's edge is from its link, on the half by its port.
    let near = Infinity;
    for (const p of svg.querySelectorAll(".link")) {
      const [a, b] = ((p.querySelector("title") || {}).textContent || "").split(" ↔ ");
      if (a !== port && b !== port) continue;
      const len = p.getTotalLength();
      for (let s = 0; s <= len / 2; s += 0.5) {
        const q = p.getPointAtLength(a === port ? s : len - s);
        near = Math.min(near, Math.hypot(q.x - x, q.y - y) - r);
      }
    }
    return { port, r: r * k, into_box_px: into * k, from_link_end: near };
  });
  const ol = document.getElementById("timeline"), or = ol.getBoundingClientRect();
  const numbers = [...ol.children].map((li) => {
    const n = li.querySelector(".n");
    if (!n) return { text: li.textContent.slice(0, 20), missing: true };
    const r = n.getBoundingClientRect();
    return { text: n.textContent, left: r.left - or.left, right: or.right - r.right, clipped: n.scrollWidth > n.clientWidth + 1 };
  });
  const last = ol.lastElementChild ? ol.lastElementChild.getBoundingClientRect() : null;
  return { links, queues, numbers, timeline: { scroll: ol.scrollHeight, client: ol.clientHeight,
    overflow: getComputedStyle(ol).overflowY, last_below_px: last ? last.bottom - or.bottom : 0 } };
})()`

// measured is measureJS's answer.
type measured struct {
	Links []struct {
		A, B, Pair string
		Visible    float64      `json:"visible_px"`
		Points     [][2]float64 `json:"points"`
	} `json:"links"`
	Queues []struct {
		Port    string
		R       float64
		IntoBox float64 `json:"into_box_px"`
		FromEnd float64 `json:"from_link_end"` // in the drawing's units
	} `json:"queues"`
	Numbers []struct {
		Text        string
		Missing     bool
		Left, Right float64
		Clipped     bool
	} `json:"numbers"`
	Timeline struct {
		Scroll, Client float64
		Overflow       string
		LastBelow      float64 `json:"last_below_px"`
	} `json:"timeline"`
}
