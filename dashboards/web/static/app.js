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
let linkEls = [];       // per layout link: {line, pfcAB, pfcBA} (topo.js)
let portDots = {};      // "node:port" → queue marker (topo.js)
let boxByNode = {};     // node → box <g>
const state = { pfc: {}, faults: {}, nodes: {}, frames: 0, events: 0 };
const charts = {};
let source = null;
let chakraAt = null;    // moves the chakra timelines' cursors (chakra.js)

function utilColor(u) {
  // grey → orange → red as utilisation goes 0 → 0.5 → 1.
  const lerp = (a, b, t) => Math.round(a + (b - a) * t);
  const [c0, c1, c2] = [[171, 178, 185], [243, 156, 18], [192, 57, 43]];
  const [a, b, t] = u < 0.5 ? [c0, c1, u / 0.5] : [c1, c2, (u - 0.5) / 0.5];
  return `rgb(${lerp(a[0], b[0], t)},${lerp(a[1], b[1], t)},${lerp(a[2], b[2], t)})`;
}

// SPEEDS are the replay speeds offered, fabric seconds per wall second.
const SPEEDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2];

// speedOptions fills the speed control, the server's default selected.
function speedOptions(def) {
  const sel = $("speed");
  const all = SPEEDS.includes(def) ? SPEEDS : [...SPEEDS, def].sort((a, b) => a - b);
  for (const s of all) {
    const o = document.createElement("option");
    o.value = String(s);
    o.textContent = s < 1e-3 ? `${Math.round(s * 1e6)} µs/s` : `${Math.round(s * 1e3)} ms/s`;
    o.selected = s === def;
    sel.appendChild(o);
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

// timeline appends an event: oldest first, numbered, so that an item
// keeps its number as events arrive; beyond MAX_EVENTS the oldest go. The
// list follows the newest event unless scrolled up to read older ones.
// t null: before this view opened. Events are queued and added together
// (flushTimeline, at the end of a frame or of the current task), the list
// measured once: a frame of a large replay pauses hundreds of links at
// once, and measuring the list after each one laid the page out hundreds
// of times.
const MAX_EVENTS = 500;
const pendingEvents = [];
function timeline(cls, text, t) {
  state.events++;
  if (!pendingEvents.length) queueMicrotask(flushTimeline);
  pendingEvents.push([cls, state.events, text, t]);
}

function flushTimeline() {
  if (!pendingEvents.length) return;
  const ol = $("timeline");
  const follow = ol.scrollTop + ol.clientHeight >= ol.scrollHeight - 8;
  const items = document.createDocumentFragment();
  for (const [cls, n, text, t] of pendingEvents.splice(0).slice(-MAX_EVENTS)) {
    const li = document.createElement("li");
    li.className = cls;
    for (const [c, s] of [["n", String(n)], ["t", t === null ? "before this view" : `${(t * 1e3).toFixed(3)} ms`], ["x", text]]) {
      const span = document.createElement("span");
      span.className = c;
      span.textContent = s;
      li.appendChild(span);
    }
    items.appendChild(li);
  }
  ol.appendChild(items);
  while (ol.children.length > MAX_EVENTS) ol.removeChild(ol.firstChild);
  if (follow) ol.scrollTop = ol.scrollHeight;
}

// MAX_PFC_EVENTS is the most pause and release events a frame adds to
// the timeline one by one.
const MAX_PFC_EVENTS = 32;

function apply(f) {
  const pfcEvents = [];
  $("ftime").textContent = `${(f.fabric_time_s * 1e3).toFixed(3)} ms`;
  state.t = f.fabric_time_s;
  (f.links || []).forEach((ls, i) => {
    const e = linkEls[i];
    if (!e) return;
    // Zero fields are left out of a frame, and a replay's names too
    // (the layout has them).
    const l = e.l, util = Math.max(ls.util_ab || 0, ls.util_ba || 0);
    e.line.setAttribute("stroke", utilColor(util));
    e.line.dataset.util = util.toFixed(3);
    for (const [mark, on, dir] of [[e.pfcAB, ls.pfc_ab, `${l.a}:${l.a_port}→${l.b}`], [e.pfcBA, ls.pfc_ba, `${l.b}:${l.b_port}→${l.a}`]]) {
      if (!!on === !!state.pfc[dir]) continue;
      mark.classList.toggle("on", !!on);
      pfcEvents.push([on, dir]);
      state.pfc[dir] = !!on;
    }
  });
  // A pause or release per link direction; past MAX_PFC_EVENTS in one
  // frame (a large fabric's replay), one event that counts them.
  if (pfcEvents.length <= MAX_PFC_EVENTS) {
    for (const [on, dir] of pfcEvents) timeline("pfc", `PFC ${on ? "pauses" : "releases"} ${dir}`, f.fabric_time_s);
  } else {
    const paused = pfcEvents.filter(([on]) => on).length;
    timeline("pfc", `PFC pauses ${paused} link directions and releases ${pfcEvents.length - paused} (e.g. ${pfcEvents[0][1]})`, f.fabric_time_s);
  }
  // The deepest queue, in numbers: circles of neighbouring ports overlap.
  let deepest = ["", 0];
  for (const [k, q] of Object.entries(f.queues || {})) if (q > deepest[1]) deepest = [k, q];
  $("qmax").textContent = deepest[1] > 0 ? `deepest queue: ${deepest[0]} ${(deepest[1] / 1024).toFixed(0)} KiB` : "";
  for (const [k, m] of Object.entries(portDots)) setQueue(m, k, (f.queues || {})[k] || 0);
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
  flushTimeline();
  state.frames++;
  if (view.replay) {
    const s = $("slider");
    if (!s.matches(":active")) s.value = Math.round((f.fabric_time_s / view.replay.length_s) * 1000);
    $("slidertime").textContent = `${(f.fabric_time_s * 1e3).toFixed(3)} / ${(view.replay.length_s * 1e3).toFixed(3)} ms`;
  }
  if (chakraAt) chakraAt(f.fabric_time_s);
  document.body.dataset.frames = String(Number(document.body.dataset.frames || 0) + 1);
  window.rocelab = { lastFrame: f }; // for tests and the curious, from the console
}

function connect(from) {
  if (source) source.close();
  const q = [];
  if (from !== undefined) q.push(`from=${from}`);
  if (view.replay) q.push(`speed=${$("speed").value}`);
  source = new EventSource(q.length ? `api/events?${q.join("&")}` : "api/events");
  source.addEventListener("frame", (e) => { $("status").textContent = view.replay ? "replay" : "live"; apply(JSON.parse(e.data)); });
  source.addEventListener("problem", (e) => { $("status").textContent = JSON.parse(e.data); });
  source.onerror = () => { $("status").textContent = view.replay ? "stopped" : "reconnecting…"; if (view.replay) source.close(); };
}

async function main() {
  view = await (await fetch("api/view")).json();
  $("title").textContent = view.title;
  document.title = `rocelab — ${view.title}`;
  ({ links: linkEls, ports: portDots, boxes: boxByNode } = drawTopology($("topo"), view.layout, el));
  charts.qp = chart("qpchart", "Gb/s", 1e9 / 8);
  charts.coll = chart("collchart", "GB/s", 1e9);
  if (view.replay) {
    $("replay").hidden = false;
    speedOptions(view.replay.speed);
    let playing = true;
    const from = () => Number($("slider").value) / 1000 * view.replay.length_s;
    $("play").onclick = () => {
      playing = !playing;
      $("play").textContent = playing ? "pause" : "play";
      if (playing) connect(from()); else source.close();
    };
    $("slider").onchange = () => { if (playing) connect(from()); };
    // A new speed plays on from the frame shown.
    $("speed").onchange = () => { if (playing) connect(state.t || 0); };
    if ((view.chakra || []).length) {
      $("chakra").hidden = false;
      chakraAt = drawChakra($("chakra"), view.chakra, view.replay.length_s, el, (t) => {
        $("slider").value = Math.round((t / view.replay.length_s) * 1000);
        if (playing) connect(t); else chakraAt(t);
      });
    }
  }
  connect();
}

main().catch((e) => { $("status").textContent = `error: ${e}`; console.error(e); });
