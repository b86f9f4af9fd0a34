// Layered layout, left to right, or top to bottom for a deep graph (more
// than DEEP layers, which left to right would fit only as a thin strip):
// Kahn's topological order (ties broken by ref, as the compiler does),
// longest-path layers, then barycentre ordering within each layer. Steps
// on a cycle are placed after the rest; edges that point backwards are
// ignored for layering.

export const NODE_W = 188;
export const NODE_H = 58;
const GAP_X = 96;
const GAP_Y = 30;
const SWEEPS = 4;
const DEEP = 8;

// layout takes node ids and [from, to] pairs and returns
// {pos: Map(id → {x, y, layer}), width, height, dir}; dir ("lr", "tb" or
// "" for the default) chooses the direction.
export function layout(ids, links, dir = "") {
  const order = topoOrder(ids, links);
  const rank = new Map(order.map((id, i) => [id, i]));
  const forward = links.filter(([a, b]) => rank.has(a) && rank.has(b) && rank.get(a) < rank.get(b));
  const preds = adjacency(forward, 1, 0);
  const succs = adjacency(forward, 0, 1);
  const layerOf = new Map();
  for (const id of order) {
    let l = 0;
    for (const p of preds.get(id) || []) l = Math.max(l, layerOf.get(p) + 1);
    layerOf.set(id, l);
  }
  const layers = [];
  for (const id of order) (layers[layerOf.get(id)] ||= []).push(id);
  orderLayers(layers, preds, succs);
  const tb = dir === "tb" || (dir !== "lr" && layers.length > DEEP);
  return tb ? placeDown(layers) : place(layers);
}

function adjacency(links, from, to) {
  const m = new Map();
  for (const l of links) {
    if (!m.has(l[from])) m.set(l[from], []);
    m.get(l[from]).push(l[to]);
  }
  return m;
}

// topoOrder is Kahn's sort with a sorted ready list; what a cycle leaves
// over follows in ref order.
export function topoOrder(ids, links) {
  const known = new Set(ids);
  const indeg = new Map(ids.map((id) => [id, 0]));
  const out = new Map(ids.map((id) => [id, []]));
  for (const [a, b] of links) {
    if (!known.has(a) || !known.has(b) || a === b) continue;
    out.get(a).push(b);
    indeg.set(b, indeg.get(b) + 1);
  }
  const ready = ids.filter((id) => indeg.get(id) === 0).sort(byRef);
  const order = [];
  while (ready.length) {
    const id = ready.shift();
    order.push(id);
    const next = [];
    for (const b of out.get(id)) {
      indeg.set(b, indeg.get(b) - 1);
      if (indeg.get(b) === 0) next.push(b);
    }
    if (next.length) insertSorted(ready, next);
  }
  const placed = new Set(order);
  return order.concat(ids.filter((id) => !placed.has(id)).sort(byRef));
}

function byRef(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function insertSorted(list, items) {
  list.push(...items);
  list.sort(byRef);
}

// orderLayers sweeps down and up, sorting each layer by the mean position
// of its neighbours in the layers already placed.
function orderLayers(layers, preds, succs) {
  for (let s = 0; s < SWEEPS; s++) {
    const down = s % 2 === 0;
    const pos = positions(layers);
    const range = down ? [...layers.keys()].slice(1) : [...layers.keys()].reverse().slice(1);
    for (const li of range) {
      const nbrs = down ? preds : succs;
      const bary = new Map();
      layers[li].forEach((id, i) => {
        const ns = (nbrs.get(id) || []).filter((n) => pos.has(n));
        bary.set(id, ns.length ? ns.reduce((t, n) => t + pos.get(n), 0) / ns.length : i);
      });
      layers[li].sort((a, b) => bary.get(a) - bary.get(b));
      layers[li].forEach((id, i) => pos.set(id, i));
    }
  }
}

function positions(layers) {
  const pos = new Map();
  for (const layer of layers) layer.forEach((id, i) => pos.set(id, i));
  return pos;
}

function place(layers) {
  const tallest = Math.max(1, ...layers.map((l) => l.length));
  const pos = new Map();
  layers.forEach((layer, li) => {
    const offset = ((tallest - layer.length) * (NODE_H + GAP_Y)) / 2;
    layer.forEach((id, i) => pos.set(id, { x: li * (NODE_W + GAP_X), y: offset + i * (NODE_H + GAP_Y), layer: li }));
  });
  return {
    pos,
    dir: "lr",
    width: Math.max(NODE_W, layers.length * (NODE_W + GAP_X) - GAP_X),
    height: tallest * (NODE_H + GAP_Y) - GAP_Y,
  };
}

// placeDown puts the layers one under another, each centred across; a
// graph deeper than DEEP is cut into columns of layers side by side, so
// it fits the pane instead of making a thin strip.
function placeDown(layers) {
  const widest = Math.max(1, ...layers.map((l) => l.length));
  const gapX = GAP_Y + 10;
  const gapY = GAP_X * 0.6;
  const bandW = widest * (NODE_W + gapX) - gapX;
  const per = layers.length > DEEP ? bandSize(layers.length, bandW, NODE_H + gapY) : layers.length;
  const pos = new Map();
  layers.forEach((layer, li) => {
    const band = Math.floor(li / per);
    const offset = band * (bandW + GAP_X) + ((widest - layer.length) * (NODE_W + gapX)) / 2;
    layer.forEach((id, i) => pos.set(id, { x: offset + i * (NODE_W + gapX), y: (li % per) * (NODE_H + gapY), layer: li }));
  });
  const bands = Math.ceil(layers.length / per);
  return {
    pos,
    dir: "tb",
    bands,
    per,
    bandW,
    width: bands * bandW + (bands - 1) * GAP_X,
    height: Math.max(NODE_H, Math.min(per, layers.length) * (NODE_H + gapY) - gapY),
  };
}

// bandSize is how many layers a column holds: the number whose columns
// make the graph about as wide as tall times ASPECT, the pane's shape.
const ASPECT = 1.6;

function bandSize(depth, bandW, rowH) {
  let best = depth;
  let off = Infinity;
  for (let bands = 1; bands <= depth; bands++) {
    const per = Math.ceil(depth / bands);
    const w = bands * bandW + (bands - 1) * GAP_X;
    const o = Math.abs(Math.log(w / (per * rowH) / ASPECT));
    if (o < off) {
      best = per;
      off = o;
    }
  }
  return best;
}
