// The graph: an SVG of the document's steps and edges, laid out by
// layout.js, with selection, pan and zoom, and connecting two steps by
// dragging from a step's output port to another step.

import { layout, NODE_W, NODE_H } from "./layout.js";
import { stepsOf, edgesOf, layoutOf } from "./doc.js";
import { escapeHTML as esc } from "./cel.js";

const SVGNS = "http://www.w3.org/2000/svg";
const JUNCTION = 30; // how far right of its source a choice group forks

export function createGraph(svg, opts) {
  const g = { svg, opts, view: { k: 1, tx: 20, ty: 20 }, laid: null, shape: "", model: null, dir: "", matches: new Set() };
  svg.innerHTML = `<defs>${marker("arrow", "edge-arrow")}${marker("arrow-bad", "edge-arrow bad")}${marker("arrow-sel", "edge-arrow sel")}</defs><g class="viewport"></g>`;
  g.port = svg.querySelector(".viewport");
  wirePointer(g);
  wireKeys(g);
  g.mini = createMinimap(g);
  // A fitted view stays fitted when the box changes size.
  new ResizeObserver(() => (g.fitted ? fit(g) : g.mini.moved())).observe(svg);
  return {
    render: (model) => render(g, model),
    fit: () => fit(g),
    zoom: (f) => zoomAt(g, f, svg.clientWidth / 2, svg.clientHeight / 2),
    stats: () => g.laid,
    // highlight marks the steps of a search on the graph.
    highlight: (ids) => {
      g.matches = new Set(ids);
      markMatches(g);
      g.mini.draw();
    },
    center: (id) => center(g, id),
    freeSpot: () => freeSpotInView(g),
    direction: (dir) => {
      g.dir = dir;
      g.shape = "";
      if (g.model) render(g, g.model);
      fit(g);
    },
  };
}

function marker(id, cls) {
  return `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path class="${cls}" d="M0,0 L10,5 L0,10 z"/></marker>`;
}

// nodeIds names every step, even one without a usable ref.
function nodeIds(doc) {
  const seen = new Set();
  return stepsOf(doc).map((s, i) => {
    let id = typeof s.ref === "string" && s.ref ? s.ref : `#${i}`;
    if (seen.has(id)) id = `${id}#${i}`;
    seen.add(id);
    return { id, step: s, index: i };
  });
}

// render draws the model; a step or edge that had the focus has it again
// afterwards (a repaint replaces the elements).
function render(g, model) {
  const a = document.activeElement;
  const node = a && g.svg.contains(a) && a.closest(".node");
  const edge = a && g.svg.contains(a) && a.closest(".edge");
  const focused = node ? { kind: "step", id: node.dataset.ref } : edge ? { kind: "edge", id: edge.dataset.edge } : null;
  try {
    paint(g, model);
  } finally {
    const now = document.activeElement;
    if (focused && (!now || now === document.body)) refocus(g, focused); // lost with its element, not moved on
  }
}

function paint(g, model) {
  g.model = model;
  const nodes = nodeIds(model.doc);
  const edges = edgesOf(model.doc);
  const ids = nodes.map((n) => n.id);
  const links = edges.map((e) => [e.from, e.to]);
  const shape = JSON.stringify([ids, links, g.dir]);
  if (shape !== g.shape || !g.laid) {
    const t0 = performance.now();
    g.laid = layout(ids, links, g.dir);
    g.laid.ms = performance.now() - t0;
    g.laid.nodes = ids.length;
    g.shape = shape;
  }
  const pos = placed(g, model);
  const parts = ['<g class="edges">'];
  const parallel = new Map();
  const tb = g.laid.dir === "tb";
  for (const e of edges) parts.push(edgeSVG(e, pos, model, parallel, tb, g.laid));
  g.svg.dataset.placed = String(pos.manual);
  parts.push("</g>", '<g class="junctions">', junctionsSVG(edges, pos, model, tb), "</g>", '<g class="nodes">');
  g.lod = levelOfDetail(g.view.k);
  g.svg.dataset.lod = g.lod.level;
  g.svg.classList.toggle("lod-compact", g.lod.level !== "full");
  for (const n of nodes) parts.push(nodeSVG(n, pos.get(n.id), model, tb, g.lod));
  g.svg.dataset.layout = g.laid.dir;
  parts.push("</g>");
  g.port.innerHTML = parts.join("");
  markMatches(g);
  g.mini.draw();
  applyView(g);
}

// placed merges the layout's places into the automatic one: a step
// moved by hand is where it was put, one not moved that would sit on it
// moves to free space nearby, and one being dragged follows the pointer.
// It sets g.pos and g.box, the drawing's bounds.
function placed(g, model) {
  const manual = layoutOf(model.doc);
  if (g.drag) manual.set(g.drag.id, { x: g.drag.x, y: g.drag.y });
  const pos = new Map();
  const boxes = [];
  for (const [id, p] of g.laid.pos) {
    const m = manual.get(id);
    if (!m) continue;
    pos.set(id, { ...p, x: m.x, y: m.y, manual: true });
    boxes.push(m);
  }
  for (const [id, p] of g.laid.pos) {
    if (pos.has(id)) continue;
    const at = boxes.length && overlaps(boxes, p.x, p.y) ? freeSpot(boxes, p.x, p.y) : p;
    pos.set(id, { ...p, x: at.x, y: at.y });
    if (boxes.length) boxes.push(at);
  }
  pos.manual = boxes.length > 0 ? manual.size : 0;
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of pos.values()) {
    x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x + NODE_W); y1 = Math.max(y1, p.y + NODE_H);
  }
  g.box = pos.size ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : { x: 0, y: 0, w: NODE_W, h: NODE_H };
  g.pos = pos;
  return pos;
}

const MARGIN_X = 40;
const MARGIN_Y = 24;

function overlaps(boxes, x, y) {
  return boxes.some((b) => Math.abs(b.x - x) < NODE_W + MARGIN_X && Math.abs(b.y - y) < NODE_H + MARGIN_Y);
}

// freeSpot is the free place nearest x, y on a grid of step-sized cells
// around it.
function freeSpot(boxes, x, y) {
  const sx = NODE_W + MARGIN_X;
  const sy = NODE_H + MARGIN_Y;
  for (let r = 1; r < 60; r++) {
    const ring = [];
    for (let i = -r; i <= r; i++) {
      for (let j = -r; j <= r; j++) {
        if (Math.max(Math.abs(i), Math.abs(j)) !== r) continue;
        ring.push({ x: x + i * sx, y: y + j * sy, d: Math.hypot(i * sx, j * sy) });
      }
    }
    ring.sort((a, b) => a.d - b.d);
    for (const c of ring) if (!overlaps(boxes, c.x, c.y)) return { x: c.x, y: c.y };
  }
  return { x, y: y + sy * 60 };
}

// freeSpotInView is where a new step goes: the free place nearest the
// middle of the view.
function freeSpotInView(g) {
  const w = g.svg.clientWidth || 800;
  const h = g.svg.clientHeight || 500;
  const x = (w / 2 - g.view.tx) / g.view.k - NODE_W / 2;
  const y = (h / 2 - g.view.ty) / g.view.k - NODE_H / 2;
  const boxes = g.pos ? [...g.pos.values()] : [];
  return overlaps(boxes, x, y) ? freeSpot(boxes, x, y) : { x, y };
}

function markMatches(g) {
  g.svg.classList.toggle("searching", g.matches.size > 0);
  for (const n of g.port.querySelectorAll(".node")) n.classList.toggle("match", g.matches.has(n.dataset.ref));
}

// center pans a step to the middle of the pane, zoomed in to at least
// full size.
function center(g, id) {
  const p = g.pos && g.pos.get(id);
  if (!p) return;
  const w = g.svg.clientWidth || 800;
  const h = g.svg.clientHeight || 500;
  const k = Math.max(g.view.k, 1);
  g.fitted = false;
  g.view = { k, tx: w / 2 - (p.x + NODE_W / 2) * k, ty: h / 2 - (p.y + NODE_H / 2) * k };
  applyView(g);
}

// createMinimap draws the whole graph small in a corner of the pane, the
// part in view as a rectangle; a click or a drag on it pans there.
function createMinimap(g) {
  const box = document.createElementNS(SVGNS, "svg");
  box.setAttribute("class", "minimap");
  box.setAttribute("aria-hidden", "true");
  box.innerHTML = `<g class="mini-nodes"></g><rect class="mini-view"/>`;
  const stage = document.createElement("div");
  stage.className = "graph-stage";
  g.svg.replaceWith(stage);
  stage.append(g.svg, box);
  const W = 180;
  const H = 120;
  const m = { scale: 1, ox: 0, oy: 0 };
  const nodes = box.querySelector(".mini-nodes");
  const view = box.querySelector(".mini-view");
  function draw() {
    const b = g.box;
    if (!b || !g.pos) return;
    const pad = 8;
    m.scale = Math.min((W - 2 * pad) / Math.max(b.w, 1), (H - 2 * pad) / Math.max(b.h, 1));
    m.ox = (W - b.w * m.scale) / 2 - b.x * m.scale;
    m.oy = (H - b.h * m.scale) / 2 - b.y * m.scale;
    box.setAttribute("viewBox", `0 0 ${W} ${H}`);
    box.setAttribute("width", W);
    box.setAttribute("height", H);
    const out = [];
    for (const [id, p] of g.pos) {
      const cls = g.matches.has(id) ? "match" : g.model && g.model.selected && g.model.selected.id === id ? "sel" : "";
      out.push(`<rect class="${cls}" data-ref="${esc(id)}" x="${(m.ox + p.x * m.scale).toFixed(1)}" y="${(m.oy + p.y * m.scale).toFixed(1)}" width="${Math.max(1.5, NODE_W * m.scale).toFixed(1)}" height="${Math.max(1.5, NODE_H * m.scale).toFixed(1)}"/>`);
    }
    nodes.innerHTML = out.join("");
    box.dataset.nodes = String(g.pos.size);
    moved();
  }
  // moved places the view's rectangle: the pane in graph coordinates.
  function moved() {
    const { k, tx, ty } = g.view;
    const w = g.svg.clientWidth || 800;
    const h = g.svg.clientHeight || 500;
    const x = m.ox + (-tx / k) * m.scale;
    const y = m.oy + (-ty / k) * m.scale;
    view.setAttribute("x", x.toFixed(1));
    view.setAttribute("y", y.toFixed(1));
    view.setAttribute("width", ((w / k) * m.scale).toFixed(1));
    view.setAttribute("height", ((h / k) * m.scale).toFixed(1));
    // With the whole graph in view (at Fit) the minimap would only hide
    // part of it.
    const b = g.box;
    const [vx, vy] = [-tx / k, -ty / k];
    const whole = !!b && vx <= b.x + 1 && vy <= b.y + 1 && vx + w / k >= b.x + b.w - 1 && vy + h / k >= b.y + b.h - 1;
    box.classList.toggle("whole", whole);
  }
  // panTo centres the pane on the graph point under a minimap position.
  function panTo(ev) {
    const r = box.getBoundingClientRect();
    const gx = ((ev.clientX - r.left) * (W / r.width) - m.ox) / m.scale;
    const gy = ((ev.clientY - r.top) * (H / r.height) - m.oy) / m.scale;
    const { k } = g.view;
    g.fitted = false;
    g.view = { k, tx: (g.svg.clientWidth || 800) / 2 - gx * k, ty: (g.svg.clientHeight || 500) / 2 - gy * k };
    applyView(g);
  }
  let dragging = false;
  box.addEventListener("pointerdown", (ev) => {
    dragging = true;
    box.setPointerCapture(ev.pointerId);
    panTo(ev);
    ev.preventDefault();
  });
  box.addEventListener("pointermove", (ev) => dragging && panTo(ev));
  box.addEventListener("pointerup", () => { dragging = false; });
  box.addEventListener("wheel", (ev) => ev.preventDefault(), { passive: false });
  return { draw, moved };
}

function edgeGeometry(e, pos, tb, laid) {
  const a = pos.get(e.from);
  const b = pos.get(e.to);
  if (!a || !b) return null;
  if (tb && laid.per && !a.manual && !b.manual && Math.floor(a.layer / laid.per) !== Math.floor(b.layer / laid.per)) return edgeAcross(a, b, laid);
  if (tb) return edgeDown(e, a, b);
  let sx = a.x + NODE_W;
  const sy = a.y + NODE_H / 2;
  const tx = b.x;
  const ty = b.y + NODE_H / 2;
  let lead = "";
  if (e.branch >= 0) {
    lead = `M${sx},${sy} L${sx + JUNCTION},${sy} `;
    sx += JUNCTION;
  }
  const dx = tx > sx ? Math.max(40, (tx - sx) / 2) : 120;
  const dy = tx > sx ? 0 : NODE_H;
  const p = [[sx, sy], [sx + dx, sy + dy], [tx - dx, ty + dy], [tx, ty]];
  const mid = [0, 1].map((k) => 0.125 * p[0][k] + 0.375 * p[1][k] + 0.375 * p[2][k] + 0.125 * p[3][k]);
  return { d: lead ? `${lead}C${p[1]},${p[2]},${p[3]}` : `M${sx},${sy} C${p[1]},${p[2]},${p[3]}`, mid };
}

// edgeAcross is an edge of a top-to-bottom layout to a later column:
// along the gap below its source, up the channel between the columns,
// along the gap above its target.
function edgeAcross(a, b, laid) {
  const sx = a.x + NODE_W / 2;
  const sy = a.y + NODE_H;
  const tx = b.x + NODE_W / 2;
  const band = Math.floor(a.layer / laid.per);
  const ch = (band + 1) * (laid.bandW + 96) - 48;
  const below = sy + 20;
  const above = b.y - 14;
  return { d: `M${sx},${sy} L${sx},${below} L${ch},${below} L${ch},${above} L${tx},${above} L${tx},${b.y}`, mid: [sx + (ch - sx) / 2, below - 4] };
}

// edgeDown is an edge of a top-to-bottom layout: from the bottom of its
// source to the top of its target, its label just below the source.
function edgeDown(e, a, b) {
  const sx = a.x + NODE_W / 2;
  let sy = a.y + NODE_H;
  const tx = b.x + NODE_W / 2;
  const ty = b.y;
  let lead = "";
  if (e.branch >= 0) {
    lead = `M${sx},${sy} L${sx},${sy + JUNCTION / 2} `;
    sy += JUNCTION / 2;
  }
  const dy = ty > sy ? Math.max(24, (ty - sy) / 2) : 80;
  const dx = ty > sy ? 0 : NODE_W;
  const p = [[sx, sy], [sx + dx, sy + dy], [tx + dx, ty - dy], [tx, ty]];
  const lx = sx + (tx - sx) * 0.25;
  return { d: lead ? `${lead}C${p[1]},${p[2]},${p[3]}` : `M${sx},${sy} C${p[1]},${p[2]},${p[3]}`, mid: [lx, sy + 16] };
}

function edgeSVG(e, pos, model, parallel, tb, laid) {
  const geo = edgeGeometry(e, pos, tb, laid);
  if (!geo) return "";
  const pair = `${e.from}>${e.to}`;
  const nth = parallel.get(pair) || 0;
  parallel.set(pair, nth + 1);
  const cyc = model.cycleEdge(e);
  const bad = cyc || model.edgeProblems.has(e.index);
  const sel = model.selected && model.selected.kind === "edge" && model.selected.id === e.id;
  const cls = ["edge", e.branch >= 0 ? "choice" : "", cyc ? "cycle" : "", bad ? "has-error" : "", sel ? "selected" : ""].join(" ");
  const label = e.branch >= 0 ? (e.isDefault ? "default" : `${e.branch + 1}. ${trunc(e.when, 24)}`) : e.on;
  const arrow = sel ? "arrow-sel" : bad ? "arrow-bad" : "arrow";
  const [lx, ly] = [geo.mid[0], geo.mid[1] - 4 + nth * 13];
  // A branch's name starts with its visible label, which may be cut.
  const name = e.branch >= 0
    ? `${label}: edge ${e.from} to ${e.to}, ${e.isDefault ? "default" : "when " + e.when}`
    : `edge ${e.from} to ${e.to}, on ${e.on}`;
  return `<g class="${cls}" data-edge="${e.id}" data-from="${esc(e.from)}" data-to="${esc(e.to)}" data-on="${esc(e.on)}" tabindex="0" role="button" aria-label="${esc(name)}">` +
    `<title>${esc(e.from)} → ${esc(e.to)}: ${esc(e.branch >= 0 ? (e.isDefault ? "default" : "when " + e.when) : "on " + e.on)}</title>` +
    `<path class="hit" d="${geo.d}"/><path class="line" d="${geo.d}" marker-end="url(#${arrow})"/>` +
    `<text class="edge-label${e.on === "success" && e.branch < 0 ? " quiet" : ""}" x="${lx}" y="${ly}" text-anchor="middle">${esc(label)}</text></g>`;
}

// junctionsSVG draws each choice group's fork, so its branches read as
// one group.
function junctionsSVG(edges, pos, model, tb) {
  const out = [];
  const seen = new Set();
  for (const e of edges) {
    if (e.branch < 0 || seen.has(e.index) || !pos.get(e.from)) continue;
    seen.add(e.index);
    const a = pos.get(e.from);
    const x = tb ? a.x + NODE_W / 2 : a.x + NODE_W + JUNCTION;
    const y = tb ? a.y + NODE_H + JUNCTION / 2 : a.y + NODE_H / 2;
    const n = edges.filter((x) => x.index === e.index).length;
    out.push(`<g class="junction${model.edgeProblems.has(e.index) ? " has-error" : ""}" data-group="${e.index}">` +
      `<path d="M${x - 7},${y} L${x},${y - 7} L${x + 7},${y} L${x},${y + 7} z"/>` +
      `<text x="${x}" y="${y - 11}" text-anchor="middle">choice · ${n}</text></g>`);
  }
  return out.join("");
}

// Level of detail. A full box's ref is 12.5 units high: below the scale
// that draws it 10 px on screen a box is drawn compact, its ref alone at
// LABEL_PX on screen; below MIN_COMPACT, where not even a short ref fits,
// the box alone.
const FULL_SCALE = 0.8;
const MIN_COMPACT = 0.2;
const LABEL_PX = 10.5;
const CHAR_EM = 0.61; // a monospace character's width, in ems

export function levelOfDetail(k) {
  if (k >= FULL_SCALE) return { level: "full", chars: 0, k };
  const chars = Math.floor((NODE_W * k - 8) / (LABEL_PX * CHAR_EM));
  if (k < MIN_COMPACT || chars < 4) return { level: "shape", chars: 0, k };
  return { level: "compact", chars, k };
}

// middle shortens s to n characters, keeping its start and its end (a
// ref's number): transf…_12, or its end alone when short: …_12.
function middle(s, n) {
  s = String(s ?? "");
  if (s.length <= n) return s;
  if (n < 8) return "…" + s.slice(s.length - (n - 1)); // the end tells steps apart
  const tail = Math.min(3, Math.floor((n - 1) / 2));
  return s.slice(0, n - 1 - tail) + "…" + s.slice(s.length - tail);
}

function nodeSVG(n, p, model, tb, lod) {
  const s = n.step;
  const kind = model.kinds.get(s.type);
  const problems = model.stepProblems.get(n.id) || [];
  const sel = model.selected && model.selected.kind === "step" && model.selected.id === n.id;
  const cyc = model.cycleSteps.has(n.id);
  const tags = controlTags(s);
  const loop = s.type === "subworkflow" && s.with && s.with.repeat ? "loop" : "";
  const cls = ["node", problems.length ? "has-error" : "", cyc ? "cycle" : "", sel ? "selected" : "", kind ? "" : "unknown", loop].join(" ");
  const sub = `${kind ? kind.label : s.type || "?"}${keySetting(s, kind) ? " · " + keySetting(s, kind) : ""}`;
  const tip = [`step ${n.id} (${s.type})`, ...tags.map((t) => t.title), ...(problems.length ? [`${problems.length} problem${problems.length > 1 ? "s" : ""}:`] : []), ...problems].join("\n");
  const tagSVG = tags.length
    ? `<text class="tags" x="${NODE_W}" y="-5" text-anchor="end">${esc(tags.map((t) => t.label).join(" · "))}</text>`
    : "";
  const [ix, iy, ox, oy] = tb ? [NODE_W / 2, 0, NODE_W / 2, NODE_H] : [0, NODE_H / 2, NODE_W, NODE_H / 2];
  const ports = model.canWrite
    ? `<circle class="port in" cx="${ix}" cy="${iy}" r="5"/><circle class="port out" data-port="out" cx="${ox}" cy="${oy}" r="7"/>`
    : "";
  const badge = problems.length
    ? `<g class="badge"><circle cx="${NODE_W - 10}" cy="10" r="9"/><text x="${NODE_W - 10}" y="14" text-anchor="middle">${problems.length}</text></g>`
    : "";
  // The box's name is its title (SVG's own naming): ref, type, control
  // tags and problems. An aria-label would have to repeat the box's
  // visible text as drawn (WCAG 2.5.3), truncations included.
  // Control tags stay above a compact box, at a readable size.
  const compactTags = tags.length && lod.level === "compact"
    ? `<text class="tags" x="${NODE_W}" y="${(-4 / lod.k).toFixed(1)}" text-anchor="end">${esc(tags.map((t) => t.label).join(" · "))}</text>`
    : "";
  if (lod.level !== "full") {
    // Compact: the box and its ref alone, the ref at a size readable on
    // screen (shortened in the middle to fit), or at a scale too small for
    // any text the box alone; its title still names it.
    const label = lod.level === "compact"
      ? `<text class="ref compact" x="${NODE_W / 2}" y="${NODE_H / 2}" text-anchor="middle" dominant-baseline="central">${esc(middle(n.id, lod.chars))}</text>`
      : "";
    return `<g class="${cls}" data-ref="${esc(n.id)}" data-type="${esc(s.type)}" tabindex="0" role="button" transform="translate(${p.x},${p.y})">` +
      `<title>${esc(tip)}</title><rect width="${NODE_W}" height="${NODE_H}" rx="7"/>${label}${compactTags}${badge}${ports}</g>`;
  }
  return `<g class="${cls}" data-ref="${esc(n.id)}" data-type="${esc(s.type)}" tabindex="0" role="button" transform="translate(${p.x},${p.y})">` +
    `<title>${esc(tip)}</title><rect width="${NODE_W}" height="${NODE_H}" rx="7"/>` +
    `<text class="icon" x="12" y="25">${esc(kind ? kind.icon : "?")}</text>` +
    `<text class="ref" x="34" y="25">${esc(trunc(n.id, 19))}</text>` +
    `<text class="sub" x="12" y="45">${esc(trunc(sub, 30))}</text>${tagSVG}${badge}${ports}</g>`;
}

// controlTags name a step's control flow above its box: a partial join or
// a race, early completion, a loop, the end of the run.
export function controlTags(step) {
  const tags = [];
  const j = step.join;
  const w = step.with && typeof step.with === "object" ? step.with : {};
  if (j && typeof j === "object") {
    const rest = j.cancel_rest === true;
    const label = j.at_least === 1 && rest ? "race" : `≥${j.at_least ?? "?"}${rest ? " ✂" : ""}`;
    tags.push({ label, title: `join: ready once ${j.at_least ?? "?"} incoming edges fired${rest ? ", cancelling the rest" : ""}` });
  } else if (j === "any") {
    tags.push({ label: "any", title: "join: ready on the first incoming edge" });
  }
  if (step.type === "scatter" && w.complete_when) tags.push({ label: "early", title: `completes early when ${w.complete_when}` });
  if (step.type === "subworkflow" && w.repeat && typeof w.repeat === "object") {
    tags.push({ label: `↻ ≤${w.repeat.max_iterations ?? "?"}`, title: `loop until ${w.repeat.until_expr ?? "?"}, at most ${w.repeat.max_iterations ?? "?"} iterations` });
  }
  if (step.end_run) tags.push({ label: `■ ${step.end_run}`, title: `ends the run ${step.end_run} once it succeeds` });
  return tags;
}

// keySetting is the setting that says most about a step: its handler,
// URL, expression, duration…
export function keySetting(step, kind) {
  const w = step.with || {};
  for (const f of kind ? kind.key : []) {
    const v = w[f];
    if (v === undefined || v === "") continue;
    return Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v);
  }
  return "";
}

function trunc(s, n) {
  s = String(s ?? "");
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function applyView(g) {
  const { k, tx, ty } = g.view;
  g.port.setAttribute("transform", `translate(${tx},${ty}) scale(${k})`);
  g.svg.dataset.scale = k.toFixed(3);
  g.svg.style.setProperty("--k", String(k));
  const lod = levelOfDetail(k);
  if (g.model && g.lod && (lod.level !== g.lod.level || lod.chars !== g.lod.chars)) render(g, g.model);
  if (g.mini) g.mini.moved();
}

function fit(g) {
  if (!g.laid) return;
  const w = g.svg.clientWidth || 800;
  const h = g.svg.clientHeight || 500;
  const b = g.box || { x: 0, y: 0, w: g.laid.width, h: g.laid.height };
  const k = Math.max(0.05, Math.min(1.2, (w - 60) / (b.w + 80), (h - 40) / (b.h + 60)));
  g.view = { k, tx: (w - b.w * k) / 2 - b.x * k, ty: Math.max(20, (h - b.h * k) / 2) - b.y * k };
  g.fitted = true;
  applyView(g);
}

function zoomAt(g, factor, cx, cy) {
  const v = g.view;
  const k = Math.max(0.05, Math.min(3, v.k * factor));
  g.fitted = false;
  g.view = { k, tx: cx - ((cx - v.tx) * k) / v.k, ty: cy - ((cy - v.ty) * k) / v.k };
  applyView(g);
}

// toGraph converts a pointer position to graph coordinates.
function toGraph(g, ev) {
  const r = g.svg.getBoundingClientRect();
  return [(ev.clientX - r.left - g.view.tx) / g.view.k, (ev.clientY - r.top - g.view.ty) / g.view.k];
}

function wirePointer(g) {
  let drag = null;
  g.svg.addEventListener("pointerdown", (ev) => {
    const port = ev.target.closest("[data-port=out]");
    if (port && g.opts.canWrite) {
      const from = port.closest(".node").dataset.ref;
      const line = document.createElementNS(SVGNS, "path");
      line.setAttribute("class", "connecting");
      g.port.appendChild(line);
      drag = { kind: "connect", from, line, start: toGraph(g, ev) };
      g.svg.setPointerCapture(ev.pointerId);
      ev.preventDefault();
      return;
    }
    g.suppressClick = false;
    const node = ev.target.closest(".node");
    if (node && g.opts.canWrite && ev.button === 0 && g.pos && g.pos.has(node.dataset.ref)) {
      // A press on a step may become a move; the pointer is captured only
      // once it does, so a plain click still reaches the step.
      const p = g.pos.get(node.dataset.ref);
      drag = { kind: "move", id: node.dataset.ref, x: ev.clientX, y: ev.clientY, px: p.x, py: p.y, moved: false };
      return;
    }
    if (ev.target.closest(".node, .edge")) return;
    drag = { kind: "pan", x: ev.clientX, y: ev.clientY, tx: g.view.tx, ty: g.view.ty, moved: false };
    g.svg.setPointerCapture(ev.pointerId);
  });
  // The moves and the release are heard on the window: a press on a step
  // captures the pointer only once it moves, and a step near the pane's
  // edge may be pressed and the pointer leave the pane before that.
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    if (drag.kind === "connect") {
      const [x, y] = toGraph(g, ev);
      const [sx, sy] = drag.start;
      drag.line.setAttribute("d", `M${sx},${sy} L${x},${y}`);
      const over = document.elementFromPoint(ev.clientX, ev.clientY);
      g.svg.querySelectorAll(".node.drop-target").forEach((n) => n.classList.remove("drop-target"));
      const target = over && over.closest(".node");
      if (target && target.dataset.ref !== drag.from) target.classList.add("drop-target");
      return;
    }
    const dx = ev.clientX - drag.x;
    const dy = ev.clientY - drag.y;
    if (drag.kind === "move") {
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) <= 4) return;
      if (!drag.moved) {
        drag.moved = true;
        g.fitted = false; // a refit would move the step from under the pointer
        g.svg.setPointerCapture(ev.pointerId);
        g.svg.classList.add("moving");
      }
      g.drag = { id: drag.id, x: drag.px + dx / g.view.k, y: drag.py + dy / g.view.k };
      if (!g.frame) {
        g.frame = requestAnimationFrame(() => {
          g.frame = 0;
          if (g.model) render(g, g.model);
        });
      }
      return;
    }
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    g.fitted = false;
    g.view = { ...g.view, tx: drag.tx + dx, ty: drag.ty + dy };
    applyView(g);
  });
  window.addEventListener("pointerup", (ev) => {
    const d = drag;
    drag = null;
    if (!d) return;
    if (d.kind === "move") {
      if (!d.moved) return;
      const at = g.drag;
      g.drag = null;
      g.suppressClick = true;
      g.svg.classList.remove("moving");
      cancelAnimationFrame(g.frame);
      g.frame = 0;
      g.opts.onMove(at.id, at.x, at.y);
      if (g.model) render(g, g.model);
      return;
    }
    if (d.kind === "connect") {
      d.line.remove();
      const over = document.elementFromPoint(ev.clientX, ev.clientY);
      const target = over && over.closest(".node");
      if (target && target.dataset.ref !== d.from) g.opts.onConnect(d.from, target.dataset.ref);
      return;
    }
    if (!d.moved) g.opts.onSelect(null);
  });
  g.svg.addEventListener("click", (ev) => {
    if (g.suppressClick) {
      g.suppressClick = false;
      return;
    }
    const node = ev.target.closest(".node");
    if (node) return g.opts.onSelect({ kind: "step", id: node.dataset.ref });
    const edge = ev.target.closest(".edge");
    if (edge) return g.opts.onSelect({ kind: "edge", id: edge.dataset.edge });
  });
  g.svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = g.svg.getBoundingClientRect();
    zoomAt(g, ev.deltaY < 0 ? 1.1 : 1 / 1.1, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
}

// keyMoves are the steps Alt+arrow moves a step by (Shift+Alt: four
// times as far), in graph units.
const keyMoves = { ArrowLeft: [-20, 0], ArrowRight: [20, 0], ArrowUp: [0, -20], ArrowDown: [0, 20] };

// wireKeys makes steps and edges work from the keyboard: Tab reaches
// them, Enter or Space selects, Delete removes, Alt+arrow moves a step
// (placing it by hand, as a drag does).
function wireKeys(g) {
  g.svg.addEventListener("keydown", (ev) => {
    const node = ev.target.closest(".node");
    const edge = ev.target.closest(".edge");
    const sel = node ? { kind: "step", id: node.dataset.ref } : edge ? { kind: "edge", id: edge.dataset.edge } : null;
    if (!sel) return;
    const move = keyMoves[ev.key];
    if (move && ev.altKey && node && g.opts.canWrite && g.pos && g.pos.has(sel.id)) {
      ev.preventDefault();
      const p = g.pos.get(sel.id);
      const f = ev.shiftKey ? 4 : 1;
      g.fitted = false; // a refit would move the step away from the keys
      g.opts.onMove(sel.id, p.x + move[0] * f, p.y + move[1] * f);
      refocus(g, sel);
      return;
    }
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      g.opts.onSelect(sel);
      refocus(g, sel);
    } else if ((ev.key === "Delete" || ev.key === "Backspace") && g.opts.canWrite) {
      ev.preventDefault();
      g.opts.onDelete(sel);
    }
  });
}

// refocus puts the focus back on a selection the repaint replaced.
function refocus(g, sel) {
  const css = sel.kind === "step" ? `.node[data-ref="${CSS.escape(sel.id)}"]` : `.edge[data-edge="${CSS.escape(sel.id)}"]`;
  const el = g.svg.querySelector(css);
  if (el) el.focus();
}
