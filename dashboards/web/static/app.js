// rocelab's live web view: draws the lab's topology from /api/view and
// colours it from the frames of /api/events (Server-Sent Events).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const el = (name, attrs, parent) => {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
};

let view = null;        // {title, layout, replay}
const linkEls = [];     // per layout link: {line, pfcAB, pfcBA}
const portDots = {};    // "node:port" → circle
const boxByNode = {};   // node → box <g>
const state = { pfc: {}, faults: {}, nodes: {}, frames: 0, events: 0 };
const charts = {};
let source = null;

function utilColor(u) {
  // grey → orange → red as utilisation goes 0 → 0.5 → 1.
  const lerp = (a, b, t) => Math.round(a + (b - a) * t);
  const [c0, c1, c2] = [[171, 178, 185], [243, 156, 18], [192, 57, 43]];
  const [a, b, t] = u < 0.5 ? [c0, c1, u / 0.5] : [c1, c2, (u - 0.5) / 0.5];
  return `rgb(${lerp(a[0], b[0], t)},${lerp(a[1], b[1], t)},${lerp(a[2], b[2], t)})`;
}

function drawTopology(layout) {
  const svg = $("topo");
  svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  const boxes = {};
  for (const b of layout.boxes) boxes[b.id] = b;
  const gl = el("g", { id: "links" }, svg);
  layout.links.forEach((l, i) => {
    const a = boxes[l.a_box], b = boxes[l.b_box];
    if (!a || !b) { linkEls.push(null); return; }
    // Spread parallel links a little so each direction can be seen.
    const off = ((i % 3) - 1) * 4;
    const ax = a.x + off, ay = a.y - a.h / 2, bx = b.x + off, by = b.y + b.h / 2;
    const line = el("line", { class: "link", x1: ax, y1: ay, x2: bx, y2: by, stroke: utilColor(0) }, gl);
    const t = el("title", {}, line); t.textContent = `${l.a}:${l.a_port} ↔ ${l.b}:${l.b_port}`;
    // PFC marks: near the paused sender of each direction.
    const at = (f) => [ax + (bx - ax) * f, ay + (by - ay) * f];
    const [pax, pay] = at(0.18), [pbx, pby] = at(0.82);
    const pfcAB = el("circle", { class: "pfc", r: 6, cx: pax, cy: pay, "data-dir": `${l.a}:${l.a_port}->${l.b}:${l.b_port}` }, gl);
    const pfcBA = el("circle", { class: "pfc", r: 6, cx: pbx, cy: pby, "data-dir": `${l.b}:${l.b_port}->${l.a}:${l.a_port}` }, gl);
    linkEls.push({ line, pfcAB, pfcBA, l });
    // Queue-depth dots at each switch end of the link.
    for (const [node, port, x, y, box] of [[l.a, l.a_port, ax, ay, a], [l.b, l.b_port, bx, by, b]]) {
      if (box.kind !== "switch" || box.nodes.length !== 1) continue;
      portDots[`${node}:${port}`] = el("circle", { class: "qdot", cx: x, cy: y, r: 0 }, gl);
    }
  });
  const gb = el("g", { id: "boxes" }, svg);
  for (const b of layout.boxes) {
    const g = el("g", { class: `box ${b.kind} ${b.plane || ""}`, "data-box": b.id }, gb);
    if (b.nodes.length === 1) { g.setAttribute("data-node", b.nodes[0]); boxByNode[b.nodes[0]] = g; }
    el("rect", { x: b.x - b.w / 2, y: b.y - b.h / 2, width: b.w, height: b.h }, g);
    const t = el("text", { x: b.x, y: b.y }, g); t.textContent = b.label;
  }
}

// chart plots rates in unit (per: the bytes/s of one unit): Gb/s for QPs,
// as the CLI prints them; GB/s for busbw, as nccl-tests does. The y axis
// starts at zero, so that 80 against 156 Gb/s does not look like noise.
function chart(id, unit, per) {
  const target = $(id);
  const opts = {
    width: target.clientWidth || 360, height: 170, legend: { show: true, live: false },
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [{ label: "fabric time (ms)" }, { label: unit, size: 50 }],
    series: [{ label: "t (ms)" }],
  };
  return { plot: new uPlot(opts, [[]], target), names: [], data: [[]], per };
}

const MAX_SERIES = 12; // a chart with hundreds of flows is unreadable: the busiest first

function pushChart(c, t, rates) {
  // New series get a column of nulls for the past.
  const busiest = [...rates].sort((a, b) => b.bytes_per_second - a.bytes_per_second);
  c.hidden = Math.max(0, rates.length - MAX_SERIES);
  for (const r of busiest) {
    if (c.names.length >= MAX_SERIES) break;
    if (!c.names.includes(r.name) && r.bytes_per_second > 0) {
      c.names.push(r.name);
      c.data.push(new Array(c.data[0].length).fill(null));
      const hue = (c.names.length * 67) % 360;
      c.plot.addSeries({ label: r.name, stroke: `hsl(${hue},65%,45%)`, width: 1.5 }, c.names.length);
    }
  }
  c.data[0].push(t * 1e3);
  c.names.forEach((n, i) => {
    const r = rates.find((x) => x.name === n);
    c.data[i + 1].push(r ? r.bytes_per_second / c.per : null);
  });
  const keep = 600;
  if (c.data[0].length > keep) c.data = c.data.map((col) => col.slice(-keep));
  c.plot.setData(c.data);
}

// timeline appends an event: oldest first, so that an item keeps its
// number as events arrive; beyond 200 the oldest go and the list starts
// at the number of the first kept. t null: before this view opened.
function timeline(cls, text, t) {
  const li = document.createElement("li");
  li.className = cls;
  li.textContent = t === null ? `(before this view)  ${text}` : `${(t * 1e3).toFixed(3)} ms  ${text}`;
  const ol = $("timeline");
  ol.appendChild(li);
  state.events++;
  while (ol.children.length > 200) ol.removeChild(ol.firstChild);
  ol.start = state.events - ol.children.length + 1;
}

function apply(f) {
  $("ftime").textContent = `${(f.fabric_time_s * 1e3).toFixed(3)} ms`;
  (f.links || []).forEach((ls, i) => {
    const e = linkEls[i];
    if (!e) return;
    const util = Math.max(ls.util_ab, ls.util_ba);
    e.line.setAttribute("stroke", utilColor(util));
    e.line.dataset.util = util.toFixed(3);
    for (const [mark, on, dir] of [[e.pfcAB, ls.pfc_ab, `${ls.a}:${ls.a_port}→${ls.b}`], [e.pfcBA, ls.pfc_ba, `${ls.b}:${ls.b_port}→${ls.a}`]]) {
      mark.classList.toggle("on", !!on);
      if (!!on !== !!state.pfc[dir]) timeline("pfc", `PFC ${on ? "pauses" : "releases"} ${dir}`, f.fabric_time_s);
      state.pfc[dir] = !!on;
    }
  });
  // The deepest queue, in numbers: circles of neighbouring ports overlap.
  let deepest = ["", 0];
  for (const [k, q] of Object.entries(f.queues || {})) if (q > deepest[1]) deepest = [k, q];
  $("qmax").textContent = deepest[1] > 0 ? `deepest queue: ${deepest[0]} ${(deepest[1] / 1024).toFixed(0)} KiB` : "";
  for (const [k, dot] of Object.entries(portDots)) {
    const q = (f.queues || {})[k] || 0;
    dot.setAttribute("r", q > 0 ? Math.min(3 + Math.sqrt(q / 1024), 14) : 0);
    const t = dot.querySelector("title") || el("title", {}, dot);
    t.textContent = `${k}: ${(q / 1024).toFixed(0)} KiB queued`;
  }
  for (const [n, h] of Object.entries(f.nodes || {})) {
    const g = boxByNode[n];
    if (g) {
      g.classList.toggle("down", h !== "up" && h !== "behind");
      g.classList.toggle("behind", h === "behind");
    }
    const say = h === "up" ? (state.nodes[n] === "behind" ? "on time again" : "back up")
      : h === "behind" ? "BEHIND the dilated clock (what the lab measures now is not the fabric's)" : "DOWN (" + h + ")";
    if (state.nodes[n] !== undefined && state.nodes[n] !== h) timeline("node", `${n}: ${say}`, f.fabric_time_s);
    state.nodes[n] = h;
  }
  const ul = $("faults");
  ul.textContent = "";
  const now = {};
  for (const fl of f.faults || []) {
    now[fl.ID] = fl;
    const li = document.createElement("li");
    li.textContent = `${fl.ID}: ${fl.Spec} on ${(fl.Targets || []).join(", ")}`;
    ul.appendChild(li);
    // A fault present in the first frame was added before the view opened:
    // its time is not known here, and is not the page's.
    if (!state.faults[fl.ID]) timeline("fault", `fault ${fl.ID} ${state.frames ? "added" : "active"}: ${fl.Spec}`, state.frames ? f.fabric_time_s : null);
  }
  for (const id of Object.keys(state.faults)) if (!now[id]) timeline("fault", `fault ${id} removed`, f.fabric_time_s);
  state.faults = now;
  if (!ul.children.length) ul.innerHTML = '<li class="none">none</li>';
  pushChart(charts.qp, f.fabric_time_s, f.qps || []);
  $("qpmore").textContent = charts.qp.hidden ? `(the ${MAX_SERIES} busiest of ${(f.qps || []).length})` : "";
  if ((f.collectives || []).length) $("coll").hidden = false; // no empty axes before a collective runs
  pushChart(charts.coll, f.fabric_time_s, f.collectives || []);
  state.frames++;
  if (view.replay) {
    const s = $("slider");
    if (!s.matches(":active")) s.value = Math.round((f.fabric_time_s / view.replay.length_s) * 1000);
    $("slidertime").textContent = `${(f.fabric_time_s * 1e3).toFixed(3)} / ${(view.replay.length_s * 1e3).toFixed(3)} ms`;
  }
  document.body.dataset.frames = String(Number(document.body.dataset.frames || 0) + 1);
  window.rocelab = { lastFrame: f }; // for tests and the curious, from the console
}

function connect(from) {
  if (source) source.close();
  source = new EventSource(from === undefined ? "api/events" : `api/events?from=${from}`);
  source.addEventListener("frame", (e) => { $("status").textContent = view.replay ? "replay" : "live"; apply(JSON.parse(e.data)); });
  source.addEventListener("problem", (e) => { $("status").textContent = JSON.parse(e.data); });
  source.onerror = () => { $("status").textContent = view.replay ? "stopped" : "reconnecting…"; if (view.replay) source.close(); };
}

async function main() {
  view = await (await fetch("api/view")).json();
  $("title").textContent = view.title;
  document.title = `rocelab — ${view.title}`;
  drawTopology(view.layout);
  charts.qp = chart("qpchart", "Gb/s", 1e9 / 8);
  charts.coll = chart("collchart", "GB/s", 1e9);
  if (view.replay) {
    $("replay").hidden = false;
    let playing = true;
    $("play").onclick = () => {
      playing = !playing;
      $("play").textContent = playing ? "pause" : "play";
      if (playing) connect(Number($("slider").value) / 1000 * view.replay.length_s); else source.close();
    };
    $("slider").onchange = () => { if (playing) connect(Number($("slider").value) / 1000 * view.replay.length_s); };
  }
  connect();
}

main().catch((e) => { $("status").textContent = `error: ${e}`; console.error(e); });
