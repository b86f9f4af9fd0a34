// The definition document as plain JSON, and the edits the graph and the
// panel make to it. Functions change the document in place.

// stepsOf and edgesOf tolerate any document, even a broken one.
export function stepsOf(doc) {
  return Array.isArray(doc && doc.steps) ? doc.steps.filter((s) => s && typeof s === "object") : [];
}

function rawEdges(doc) {
  return Array.isArray(doc && doc.edges) ? doc.edges : [];
}

// edgesOf flattens plain edges and choice branches into
// {id, from, to, on, index, branch, when, isDefault}.
export function edgesOf(doc) {
  const out = [];
  rawEdges(doc).forEach((e, i) => {
    if (!e || typeof e !== "object") return;
    if (Array.isArray(e.choice)) {
      e.choice.forEach((b, k) => {
        if (!b || typeof b !== "object") return;
        out.push({ id: `e${i}c${k}`, index: i, branch: k, from: e.from, to: b.to, on: "success",
          when: b.when || "", isDefault: b.default === true });
      });
      return;
    }
    out.push({ id: `e${i}`, index: i, branch: -1, from: e.from, to: e.to, on: e.on || "success" });
  });
  return out;
}

// newRef is a free ref for a step of the type: http_2, task_3…
export function newRef(doc, type) {
  const taken = new Set(stepsOf(doc).map((s) => s.ref));
  for (let n = 1; ; n++) {
    const ref = `${type}_${n}`;
    if (!taken.has(ref)) return ref;
  }
}

export function addStep(doc, kind) {
  if (!Array.isArray(doc.steps)) doc.steps = [];
  const ref = newRef(doc, kind.type);
  doc.steps.push({ ref, type: kind.type, with: structuredClone(kind.sample || {}) });
  return ref;
}

export function removeStep(doc, ref) {
  doc.steps = stepsOf(doc).filter((s) => s.ref !== ref);
  unplace(doc, ref);
  doc.edges = rawEdges(doc).filter((e) => {
    if (!e || e.from === ref) return false;
    if (Array.isArray(e.choice)) {
      e.choice = e.choice.filter((b) => b && b.to !== ref);
      return e.choice.length > 0;
    }
    return e.to !== ref;
  });
}

export function connect(doc, from, to, on) {
  if (!Array.isArray(doc.edges)) doc.edges = [];
  const edge = { from, to };
  if (on && on !== "success") edge.on = on;
  doc.edges.push(edge);
}

export function removeEdge(doc, edge) {
  const raw = rawEdges(doc);
  if (edge.branch < 0) {
    raw.splice(edge.index, 1);
    return;
  }
  const group = raw[edge.index];
  group.choice.splice(edge.branch, 1);
  if (group.choice.length === 0) raw.splice(edge.index, 1);
}

export function setEdgeOutcome(doc, edge, on) {
  const e = rawEdges(doc)[edge.index];
  if (!e || edge.branch >= 0) return;
  if (on === "success") delete e.on;
  else e.on = on;
}

export function setBranchWhen(doc, edge, when) {
  const b = rawEdges(doc)[edge.index].choice[edge.branch];
  if (b.default) return;
  b.when = when;
}

export function stepByRef(doc, ref) {
  return stepsOf(doc).find((s) => s.ref === ref);
}

export function stepIndex(doc, ref) {
  return Array.isArray(doc.steps) ? doc.steps.findIndex((s) => s && s.ref === ref) : -1;
}

// renameStep changes a ref and every edge and scatter_ref naming it.
export function renameStep(doc, from, to) {
  const s = stepByRef(doc, from);
  if (!s || !to || stepByRef(doc, to)) return false;
  s.ref = to;
  const at = layoutOf(doc).get(from);
  if (at) {
    unplace(doc, from);
    place(doc, to, at.x, at.y);
  }
  for (const e of rawEdges(doc)) {
    if (!e) continue;
    if (e.from === from) e.from = to;
    if (e.to === from) e.to = to;
    for (const b of Array.isArray(e.choice) ? e.choice : []) if (b && b.to === from) b.to = to;
  }
  for (const x of stepsOf(doc)) if (x.with && x.with.scatter_ref === from) x.with.scatter_ref = to;
  return true;
}

// setPath sets (or, for undefined and "", deletes) a dotted field of a
// step: "with.handler", "retry.max_attempts", "run_if".
export function setPath(step, path, value) {
  const parts = path.split(".");
  let obj = step;
  for (const p of parts.slice(0, -1)) {
    if (!obj[p] || typeof obj[p] !== "object") obj[p] = {};
    obj = obj[p];
  }
  const last = parts[parts.length - 1];
  if (value === undefined || value === "") delete obj[last];
  else obj[last] = value;
  pruneEmpty(step, parts.slice(0, -1));
}

// pruneEmpty drops the objects on path left empty, innermost first
// (retry, with.repeat), keeping `with` itself.
function pruneEmpty(step, parents) {
  for (let depth = parents.length; depth > 0; depth--) {
    const path = parents.slice(0, depth);
    if (path.length === 1 && path[0] === "with") return;
    const holder = path.slice(0, -1).reduce((o, p) => o[p], step);
    const key = path[path.length - 1];
    if (holder[key] && typeof holder[key] === "object" && Object.keys(holder[key]).length === 0) delete holder[key];
    else return;
  }
}

export function getPath(step, path) {
  let v = step;
  for (const p of path.split(".")) {
    if (v == null || typeof v !== "object") return undefined;
    v = v[p];
  }
  return v;
}

// layoutOf reads the document's layout, the places of the steps moved by
// hand: {REF: {x, y}}, which the compiler ignores. What is not a place
// is skipped.
export function layoutOf(doc) {
  const out = new Map();
  const l = doc && doc.layout;
  if (!l || typeof l !== "object" || Array.isArray(l)) return out;
  for (const [ref, p] of Object.entries(l)) {
    if (p && typeof p === "object" && Number.isFinite(p.x) && Number.isFinite(p.y)) out.set(ref, { x: p.x, y: p.y });
  }
  return out;
}

// place puts a step at x, y in the layout, in whole units.
export function place(doc, ref, x, y) {
  if (!doc.layout || typeof doc.layout !== "object" || Array.isArray(doc.layout)) doc.layout = {};
  doc.layout[ref] = { x: Math.round(x), y: Math.round(y) };
}

export function unplace(doc, ref) {
  const l = doc.layout;
  if (!l || typeof l !== "object" || Array.isArray(l)) return;
  delete l[ref];
  if (Object.keys(l).length === 0) delete doc.layout;
}
