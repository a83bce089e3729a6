// rocelab's replay: the per-rank timelines of a report's chakra jobs
// (report.Timeline from /api/view), drawn as a Gantt chart on the replay's
// fabric-time axis, a cursor at the frame shown; a click seeks there.
"use strict";

const CHAKRA = { gutter: 170, width: 1000, laneH: 9, pad: 5, axisH: 22 };

// drawChakra draws every timeline into parent and returns a function that
// moves the cursors to fabric time t (seconds).
function drawChakra(parent, timelines, length, el, seek) {
  const cursors = [];
  const tick = (span) => {
    const raw = span / 6, p = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw);
  };
  for (const tl of timelines) {
    const end = Math.max(length, tl.end_s);
    const lanes = Math.max(tl.lanes || 1, 1);
    const rowH = lanes * CHAKRA.laneH + 2 * CHAKRA.pad;
    const h = tl.rows.length * rowH + CHAKRA.axisH;
    const x = (t) => CHAKRA.gutter + (t / end) * (CHAKRA.width - CHAKRA.gutter - 10);
    const box = document.createElement("div");
    box.className = "chakrajob";
    const h3 = document.createElement("h3");
    h3.textContent = `${tl.job}: ${tl.caption}; compute stream (top lane), communication below`;
    box.appendChild(h3);
    const svg = el("svg", { viewBox: `0 0 ${CHAKRA.width} ${h}`, class: "gantt", "data-job": tl.job, role: "img", "aria-label": `timeline of chakra job ${tl.job}` }, box);
    tl.rows.forEach((r, i) => {
      const g = el("g", { "data-rank": String(r.rank), transform: `translate(0,${i * rowH})` }, svg);
      if (i % 2) el("rect", { x: CHAKRA.gutter, y: 0, width: CHAKRA.width - CHAKRA.gutter - 10, height: rowH, class: "band" }, g);
      el("text", { x: CHAKRA.gutter - 6, y: rowH / 2, class: "rowname" }, g).textContent = r.name;
      for (const s of r.spans) {
        const k = tl.kinds[s.kind] || { name: "?", color: "#888" };
        const w = Math.max(x(s.to_s) - x(s.from_s), 0.8);
        const rect = el("rect", { x: x(s.from_s), y: CHAKRA.pad + s.lane * CHAKRA.laneH, width: w, height: CHAKRA.laneH - 1, fill: k.color, class: "span" }, g);
        el("title", {}, rect).textContent = `${s.name} (${k.name}) ${(s.from_s * 1e6).toFixed(2)}–${(s.to_s * 1e6).toFixed(2)} µs`;
      }
    });
    const ay = tl.rows.length * rowH;
    el("line", { x1: CHAKRA.gutter, x2: CHAKRA.width - 10, y1: ay, y2: ay, class: "axis" }, svg);
    const step = tick(end * 1e3);
    for (let v = 0; v <= end * 1e3 + 1e-12; v += step) {
      el("line", { x1: x(v / 1e3), x2: x(v / 1e3), y1: ay, y2: ay + 4, class: "axis" }, svg);
      el("text", { x: x(v / 1e3), y: ay + 15, class: "tick" }, svg).textContent = `${+v.toFixed(6)} ms`;
    }
    const cur = el("line", { x1: x(0), x2: x(0), y1: 0, y2: ay, class: "cursor" }, svg);
    cursors.push({ cur, x });
    svg.addEventListener("click", (ev) => {
      const p = svg.getBoundingClientRect();
      const vx = ((ev.clientX - p.left) / p.width) * CHAKRA.width;
      if (vx >= CHAKRA.gutter) seek(((vx - CHAKRA.gutter) / (CHAKRA.width - CHAKRA.gutter - 10)) * end);
    });
    const leg = document.createElement("div");
    leg.className = "chakralegend";
    for (const k of tl.kinds) {
      const s = document.createElement("span");
      const i = document.createElement("i");
      i.style.background = k.color;
      s.appendChild(i);
      s.appendChild(document.createTextNode(k.name));
      leg.appendChild(s);
    }
    box.appendChild(leg);
    parent.appendChild(box);
  }
  return (t) => {
    for (const c of cursors) {
      const v = c.x(t).toFixed(1);
      c.cur.setAttribute("x1", v);
      c.cur.setAttribute("x2", v);
    }
  };
}
