// rocelab's live web view: the topology drawing. Every link end gets its
// own point on its box's side (spread along the side, ordered by where the
// other end is), so parallel links — a host's two GPU NICs on one switch,
// double uplinks — are drawn apart; links between boxes of one row arc
// above it; a link the boxes would still hide (boxes touching or
// overlapping) loops out beside them, drawn above them. Queue
// markers sit just outside the box, at the end of their port's link.
"use strict";

// sideOf says which side of box me a link to box other leaves from: the
// top towards a box above, the bottom towards one below, the top (an arc)
// towards a box of the same row.
function sideOf(me, other) {
  if (other.y + other.h / 2 <= me.y - me.h / 2) return "top";
  if (other.y - other.h / 2 >= me.y + me.h / 2) return "bottom";
  return "top";
}

// linkEnds returns, per link index, its two ends {x, y, side, box} (null
// for a link with an elided box).
function linkEnds(layout, boxes) {
  const sides = {}; // "box|side" → [{i, end, other}]
  const ends = layout.links.map(() => null);
  layout.links.forEach((l, i) => {
    const a = boxes[l.a_box], b = boxes[l.b_box];
    if (!a || !b || a === b) return;
    ends[i] = { a: { box: a, side: sideOf(a, b) }, b: { box: b, side: sideOf(b, a) } };
    for (const [end, me, other] of [["a", a, b], ["b", b, a]]) {
      const k = `${me.id}|${ends[i][end].side}`;
      (sides[k] = sides[k] || []).push({ i, end, me, other, arc: ends[i].a.side === ends[i].b.side });
    }
  });
  for (const list of Object.values(sides)) {
    // By the other end's x; parallel links by index, mirrored at an arc's
    // left end, so that parallel arcs (higher for a later link) nest.
    list.sort((p, q) => p.other.x - q.other.x || (p.arc && p.other.x > p.me.x ? q.i - p.i : p.i - q.i));
    list.forEach((p, k) => {
      const e = ends[p.i][p.end], b = p.me;
      e.gap = b.w / (list.length + 1);
      e.x = b.x - b.w / 2 + (k + 1) * e.gap;
      e.y = e.side === "top" ? b.y - b.h / 2 : b.y + b.h / 2;
    });
  }
  return ends;
}

// linkPath is the SVG path of a link between its ends: a straight line
// between rows, an arc above a row (higher for each parallel link, rank).
function linkPath(e, rank) {
  const { a, b } = e;
  if (a.side === b.side) {
    const h = 30 + 14 * rank;
    return `M${a.x},${a.y} C${a.x},${a.y - h} ${b.x},${b.y - h} ${b.x},${b.y}`;
  }
  return `M${a.x},${a.y} L${b.x},${b.y}`;
}

// visibleLength returns how much of path (user units, sampled every 2)
// lies outside every box; it stops counting at enough (the caller asks
// only whether a link shows that much: a large drawing's links are long,
// and sampling all of them took seconds).
function visibleLength(path, rects, enough = Infinity) {
  const len = path.getTotalLength();
  let vis = 0;
  for (let s = 1; s < len && vis < enough; s += 2) {
    const p = path.getPointAtLength(s);
    if (!rects.some((r) => p.x > r.x && p.x < r.x + r.w && p.y > r.y && p.y < r.y + r.h)) vis += 2;
  }
  return vis;
}

// MIN_VISIBLE is the length (user units) of a link that must show outside
// the boxes; a link with less is drawn above them.
const MIN_VISIBLE = 24;

// drawTopology draws layout into svg and returns the elements frames
// colour: links[i] = {line, pfcAB, pfcBA, l}, ports["node:port"] = a
// queue marker {dot, x, y, dir, rmax} (its centre is x, y moved by its
// radius + 1 in dir: -1 up, 1 down, 0 stays), boxes[node] = the box's <g>.
function drawTopology(svg, layout, el) {
  const out = { links: [], ports: {}, boxes: {} };
  const boxes = {};
  for (const b of layout.boxes) boxes[b.id] = b;
  const rects = layout.boxes.map((b) => ({ x: b.x - b.w / 2, y: b.y - b.h / 2, w: b.w, h: b.h }));
  const ends = linkEnds(layout, boxes);
  const gl = el("g", { id: "links" }, svg);
  const gb = el("g", { id: "boxes" }, svg);
  const gover = el("g", { id: "links-over" }, svg); // links the boxes would hide
  const gm = el("g", { id: "marks" }, svg);
  const ranks = {};
  layout.links.forEach((l, i) => {
    const e = ends[i];
    if (!e) { out.links.push(null); return; }
    const pair = [l.a_box, l.b_box].sort().join("|");
    ranks[pair] = (ranks[pair] || 0) + 1;
    const line = el("path", { class: "link", d: linkPath(e, ranks[pair] - 1), stroke: "rgb(171,178,185)",
      "data-link": `${l.a}:${l.a_port}-${l.b}:${l.b_port}`, "data-pair": pair }, gl);
    const t = el("title", {}, line); t.textContent = `${l.a}:${l.a_port} ↔ ${l.b}:${l.b_port}`;
    out.links.push({ line, l, e });
  });
  for (const b of layout.boxes) {
    const g = el("g", { class: `box ${b.kind} ${b.plane || ""}`, "data-box": b.id }, gb);
    if (b.nodes.length === 1) { g.setAttribute("data-node", b.nodes[0]); out.boxes[b.nodes[0]] = g; }
    el("rect", { x: b.x - b.w / 2, y: b.y - b.h / 2, width: b.w, height: b.h }, g);
    const t = el("text", { x: b.x, y: b.y }, g); t.textContent = b.label;
  }
  for (const le of out.links) {
    if (!le) continue;
    const { line, l, e } = le;
    if (visibleLength(line, rects, MIN_VISIBLE) < MIN_VISIBLE) {
      // Boxes touching or overlapping: loop out right of every box in the
      // way, drawn above the boxes.
      const [y0, y1] = [Math.min(e.a.box.y, e.b.box.y) - 40, Math.max(e.a.box.y, e.b.box.y) + 40];
      const right = Math.max(...rects.filter((r) => r.y < y1 && r.y + r.h > y0).map((r) => r.x + r.w)) + 60;
      line.setAttribute("d", `M${e.a.x},${e.a.y} C${right},${e.a.box.y} ${right},${e.b.box.y} ${e.b.x},${e.b.y}`);
      gover.appendChild(line);
      line.classList.add("over");
      le.over = true;
    }
    // PFC marks: nearer the paused sender of each direction, clear of
    // the queue markers at the ends.
    const len = line.getTotalLength(), at = (f) => line.getPointAtLength(len * f);
    const [pa, pb] = [at(0.3), at(0.7)];
    le.pfcAB = el("circle", { class: "pfc", r: 6, cx: pa.x, cy: pa.y, "data-dir": `${l.a}:${l.a_port}->${l.b}:${l.b_port}` }, gm);
    le.pfcBA = el("circle", { class: "pfc", r: 6, cx: pb.x, cy: pb.y, "data-dir": `${l.b}:${l.b_port}->${l.a}:${l.a_port}` }, gm);
    // Queue markers beside each switch port, just outside its box.
    for (const [node, port, end, from] of [[l.a, l.a_port, e.a, 0], [l.b, l.b_port, e.b, len]]) {
      if (end.box.kind !== "switch" || end.box.nodes.length !== 1) continue;
      const rmax = Math.max(Math.min(QMAX_R, end.gap / 2 - 1), 3); // neighbours never hide each other
      const dot = el("circle", { class: "qdot", cx: end.x, cy: end.y, r: 0, "data-port": `${node}:${port}`, "data-box": end.box.id }, gm);
      const m = { dot, x: end.x, y: end.y, dir: end.side === "top" ? -1 : 1, rmax };
      if (le.over) Object.assign(m, clearOf(line, from, len, rects, rmax + 1), { dir: 0 });
      out.ports[`${node}:${port}`] = m;
    }
  }
  // Frame the drawing (arcs and markers may reach past the layout's box).
  const bb = svg.getBBox(), pad = QMAX_R + 8;
  svg.setAttribute("viewBox", `${bb.x - pad} ${bb.y - pad} ${bb.width + 2 * pad} ${bb.height + 2 * pad}`);
  return out;
}

// clearOf returns the first point of path, walking from length from
// towards its other end, at least r from every box (the end itself if
// none is).
function clearOf(path, from, len, rects, r) {
  const dist = (p, b) => Math.hypot(Math.max(b.x - p.x, 0, p.x - b.x - b.w), Math.max(b.y - p.y, 0, p.y - b.y - b.h));
  for (let s = 0; s <= len; s += 1) {
    const p = path.getPointAtLength(from === 0 ? s : len - s);
    if (rects.every((b) => dist(p, b) >= r)) return { x: p.x, y: p.y };
  }
  const p = path.getPointAtLength(from);
  return { x: p.x, y: p.y };
}

// QMAX_R is the largest queue marker's radius.
const QMAX_R = 10;

// setQueue sizes a port's queue marker for q bytes and keeps it outside
// its box, on the side its link leaves.
function setQueue(m, key, q) {
  const r = q > 0 ? Math.min(3 + Math.sqrt(q / 1024), m.rmax) : 0;
  m.dot.setAttribute("r", r);
  m.dot.setAttribute("cx", m.x);
  m.dot.setAttribute("cy", m.y + m.dir * (r + 1));
  m.dot.dataset.bytes = String(q);
  const t = m.dot.querySelector("title") || (() => { const e = document.createElementNS(SVG, "title"); m.dot.appendChild(e); return e; })();
  t.textContent = `${key}: ${(q / 1024).toFixed(0)} KiB queued`;
}
