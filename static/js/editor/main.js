// The definition editor: the document as JSON in the browser, drawn as a
// graph and edited through the palette, the graph and the side panel; the
// server compiles every change and converts between JSON and YAML.

import { poster, debounce } from "./api.js";
import * as docs from "./doc.js";
import { createGraph } from "./graph.js";
import { createPanel, WORKFLOW } from "./panel.js";
import { escapeHTML as esc } from "./cel.js";
import { createSource } from "./source.js";
import { createTry } from "./try.js";

const root = document.getElementById("editor");
const catalogue = JSON.parse(document.getElementById("editor-kinds").textContent);
const kinds = new Map(catalogue.kinds.map((k) => [k.type, k]));
const canWrite = root.dataset.canWrite === "true";
const post = poster(root.dataset.csrf);
const yamlEl = document.getElementById("yaml");
const $ = (id) => document.getElementById(id);
const source = createSource(yamlEl);

const state = {
  doc: null,
  check: JSON.parse($("editor-init").textContent),
  selected: null,
  seq: 0, // the latest check sent; older answers are dropped
  pending: false, // a change is not checked yet
};
state.doc = state.check.document || { key: root.dataset.key, steps: [] };

const graph = createGraph($("graph"), {
  canWrite,
  onSelect: select,
  onDelete: remove,
  // A step dragged is placed by hand: its place is kept in the document.
  onMove: (id, x, y) => change((d) => docs.place(d, id, x, y)),
  onConnect: (from, to) => {
    const k = kinds.get((docs.stepByRef(state.doc, from) || {}).type);
    change((d) => docs.connect(d, from, to, k ? k.outcomes[0] : "success"));
  },
});

const panel = createPanel($("panel"), {
  kinds, canWrite, common: catalogue.common, forEach: catalogue.for_each, retry: catalogue.retry,
  templateTypes: catalogue.template_types, workflow: catalogue.workflow, doc: () => state.doc,
  hintsUrl: root.dataset.checkUrl.replace(/\/check$/, "/hints"),
  onDelete: remove,
  onWorkflow: openWorkflow,
  // A workflow setting is a field of the document itself.
  onField: (sel, path, value) => change((d) => docs.setPath(sel.kind === "workflow" ? d : docs.stepByRef(d, sel.id), path, value),
    { keepPanel: true, field: `${sel.id}.${path}` }),
  // A mode change redraws the panel (the other mode's fields go) and
  // gives the focus back to the mode's control.
  onMode: (sel, path, value, drop, add) => {
    change((d) => {
      const s = docs.stepByRef(d, sel.id);
      docs.setPath(s, path, value);
      for (const q of drop) docs.setPath(s, q, undefined);
      for (const [q, v] of add) docs.setPath(s, q, v);
    }, { field: `${sel.id}.${path}` });
    const el = document.getElementById("f-" + path.replace(/[^a-z0-9_]/gi, "-"));
    if (el) el.focus();
  },
  onRename: (sel, to) => {
    if (to === sel.id) return;
    change((d) => docs.renameStep(d, sel.id, to));
    if (docs.stepByRef(state.doc, to)) select({ kind: "step", id: to });
  },
  onEdgeChange: (sel, what, value) => change((d) => {
    const e = docs.edgesOf(d).find((x) => x.id === sel.id);
    if (!e) return;
    if (what === "on") docs.setEdgeOutcome(d, e, value);
    else docs.setBranchWhen(d, e, value);
  }, { keepPanel: true }),
});

const tryIt = createTry({
  post, url: root.dataset.tryUrl, runsUrl: root.dataset.tryRunsUrl, canTry: root.dataset.canTry === "true",
  doc: () => state.doc,
  documentText: async () => { await check.flush(); return yamlEl.value; },
});

// ---- checking: every change goes to the server, debounced ----

const send = debounce(async (from) => {
  const seq = ++state.seq;
  const document = from === "yaml" ? yamlEl.value : JSON.stringify(state.doc);
  setCompileState("checking…", "");
  const t0 = performance.now();
  const res = await post(root.dataset.checkUrl, { document });
  if (seq !== state.seq || !res.data) return;
  root.dataset.checkMs = Math.round(performance.now() - t0);
  state.pending = false;
  applyCheck(res.data, from);
}, 200);

// check schedules a check; until its answer the editor says so.
function check(from) {
  state.pending = true;
  setCompileState("checking…", "");
  send(from);
}
check.flush = () => send.flush();

function applyCheck(data, from) {
  state.check = data;
  // The pane shows the server's YAML after a graph change, else the text
  // as typed (JSON stays JSON): the problems' lines are in that.
  state.linesIn = from === "graph" ? "yaml_lines" : "lines";
  if (from === "graph" && data.yaml) yamlEl.value = data.yaml;
  state.lastYAML = yamlEl.value;
  if (from === "yaml" && data.document) {
    state.doc = data.document;
    if (state.selected && !findSelected()) state.selected = null;
  }
  redraw({ keepPanel: from === "graph" || panel.busy() });
  root.dataset.checked = String(state.seq);
  dirtyMark();
}

// change applies mutate to the document. One that changes nothing (a
// field's change event after its input events already applied the
// value, as when it loses focus to a click on the graph) neither pushes
// an undo step nor redraws: a redraw would replace the node under the
// pointer and lose the click.
function change(mutate, opt = {}) {
  if (!canWrite) return;
  const before = snapshot();
  mutate(state.doc);
  if (JSON.stringify(state.doc) === before.doc) return;
  remember({ field: opt.field }, before);
  if (state.selected && !findSelected()) state.selected = null;
  redraw(opt);
  check("graph");
}

yamlEl.addEventListener("input", () => {
  remember({ typing: true });
  check("yaml");
});

// ---- undo and redo: snapshots of the document before each change (a
// burst of typing in the YAML is one change) ----

const history = { past: [], future: [], typedAt: 0, burst: "", limit: 200 };

function snapshot() {
  return { doc: JSON.stringify(state.doc), yaml: yamlEl.value };
}

// remember pushes the document as it was before a change (before, or
// now). A burst of typing is one step: in the YAML (typing), or in one
// panel field (field: its path), each keystroke within a second of the
// last.
function remember(opt = {}, before = null) {
  const now = Date.now();
  const burst = opt.typing ? "yaml" : opt.field ? `field:${opt.field}` : "";
  if (burst && burst === history.burst && now - history.typedAt < 1000) {
    history.typedAt = now;
    return;
  }
  history.typedAt = burst ? now : 0;
  history.burst = burst;
  const last = history.past[history.past.length - 1];
  const s = opt.typing ? { ...snapshot(), yaml: state.lastYAML ?? yamlEl.value } : before || snapshot();
  if (!last || last.doc !== s.doc || last.yaml !== s.yaml) history.past.push(s);
  if (history.past.length > history.limit) history.past.shift();
  history.future = [];
  undoButtons();
}

function travel(from, to) {
  if (!from.length) return;
  to.push(snapshot());
  const s = from.pop();
  state.doc = JSON.parse(s.doc);
  yamlEl.value = s.yaml;
  state.lastYAML = s.yaml;
  history.typedAt = 0;
  history.burst = "";
  if (state.selected && !findSelected()) state.selected = null;
  redraw();
  check("yaml");
  undoButtons();
}

const undo = () => travel(history.past, history.future);
const redo = () => travel(history.future, history.past);

function undoButtons() {
  if (!$("undo")) return;
  $("undo").disabled = !history.past.length;
  $("redo").disabled = !history.future.length;
  root.dataset.undo = String(history.past.length);
  dirtyMark();
}

if ($("undo")) {
  $("undo").addEventListener("click", undo);
  $("redo").addEventListener("click", redo);
}

document.addEventListener("keydown", (ev) => {
  if (!canWrite || !(ev.ctrlKey || ev.metaKey) || ev.altKey) return;
  if (ev.target.closest("input, textarea, select")) return; // their own undo
  const k = ev.key.toLowerCase();
  if (k === "z" && !ev.shiftKey) undo();
  else if ((k === "z" && ev.shiftKey) || k === "y") redo();
  else return;
  ev.preventDefault();
});

// ---- the leave-page guard: work not saved is not lost by a click ----

state.savedYAML = yamlEl.value;
state.lastYAML = yamlEl.value;

function dirty() {
  return canWrite && yamlEl.value !== state.savedYAML;
}

function dirtyMark() {
  root.dataset.dirty = String(dirty());
  const d = $("dirty");
  if (d) d.hidden = !dirty();
}

window.addEventListener("beforeunload", (ev) => {
  if (!dirty()) return;
  ev.preventDefault();
  ev.returnValue = "";
});

// ---- drawing ----

function problemsByTarget() {
  const steps = docs.stepsOf(state.doc);
  const idAt = (i) => (steps[i] && typeof steps[i].ref === "string" && steps[i].ref ? steps[i].ref : `#${i}`);
  const stepProblems = new Map();
  const edgeProblems = new Set();
  for (const p of state.check.problems || []) {
    const m = /^steps\[(\d+)\]/.exec(p.path);
    const id = m ? idAt(Number(m[1])) : p.step && p.path !== "edges" ? p.step : null;
    if (id) {
      if (!stepProblems.has(id)) stepProblems.set(id, []);
      stepProblems.get(id).push(`${p.path}: ${p.message}`);
    }
    const e = /^edges\[(\d+)\]/.exec(p.path);
    if (e) edgeProblems.add(Number(e[1]));
  }
  return { stepProblems, edgeProblems };
}

function model() {
  const { stepProblems, edgeProblems } = problemsByTarget();
  const cycles = (state.check.cycles || []).map((c) => new Set(c));
  return {
    doc: state.doc, kinds, canWrite, selected: state.selected, stepProblems, edgeProblems,
    cycleSteps: new Set(cycles.flatMap((c) => [...c])),
    cycleEdge: (e) => cycles.some((c) => c.has(e.from) && c.has(e.to)),
  };
}

function redraw(opt = {}) {
  const t0 = performance.now();
  graph.render(model());
  root.dataset.renderMs = Math.round(performance.now() - t0);
  const st = graph.stats();
  $("graph-stats").textContent = st ? `${st.nodes} steps · layout ${st.ms.toFixed(0)} ms` : "";
  if (!opt.keepPanel) showSelection();
  panelProblems();
  problemList();
  connectForm();
  search.refresh();
  autoPlace.hidden = !canWrite || docs.layoutOf(state.doc).size === 0;
  const n = (state.check.problems || []).length;
  if (state.pending) return;
  setCompileState(n ? `${n} problem${n > 1 ? "s" : ""}` : `compiles · ${(state.check.hash || "").slice(0, 12)}`, n ? "fail" : "ok");
}

function setCompileState(text, cls) {
  const el = $("compile-state");
  el.textContent = text;
  el.className = `status ${cls}`;
}

// problemLine is the line of the text pane problem i is on, 0 if none.
function problemLine(i) {
  const lines = state.check[state.linesIn || "lines"];
  return (Array.isArray(lines) && lines[i]) || 0;
}

function problemList() {
  const list = state.check.problems || [];
  $("problem-count").textContent = list.length;
  $("problems").innerHTML = list.map((p, i) => {
    const line = problemLine(i);
    return `<li data-step="${esc(p.step || "")}" data-path="${esc(p.path)}" data-line="${line}" tabindex="0">` +
      `${line ? `<span class="line">line ${line}</span> ` : ""}<span class="mono">${esc(p.path)}</span> ${esc(p.message)}</li>`;
  }).join("");
  source.mark(list.map((p, i) => ({ line: problemLine(i), message: p.path ? `${p.path}: ${p.message}` : p.message })));
}

// A problem, clicked or Entered, selects its step and puts the text
// pane's cursor on its line.
function openProblem(li) {
  const m = /^steps\[(\d+)\]/.exec(li.dataset.path);
  const step = m ? docs.stepsOf(state.doc)[Number(m[1])] : docs.stepByRef(state.doc, li.dataset.step);
  const line = Number(li.dataset.line);
  if (step) select({ kind: "step", id: step.ref });
  else if (li.dataset.path && !/^edges(\[|$)/.test(li.dataset.path)) select({ kind: "workflow", id: WORKFLOW });
  if (line) source.goto(line);
}

$("problems").addEventListener("click", (ev) => {
  const li = ev.target.closest("li");
  if (li) openProblem(li);
});
$("problems").addEventListener("keydown", (ev) => {
  const li = ev.target.closest("li");
  if (!li || ev.key !== "Enter") return;
  ev.preventDefault(); // else the Enter types a newline where the focus lands
  openProblem(li);
});

// ---- selection and the panel ----

function findSelected() {
  const s = state.selected;
  if (!s) return null;
  if (s.kind === "workflow") return state.doc;
  if (s.kind === "step") return docs.stepByRef(state.doc, s.id);
  return docs.edgesOf(state.doc).find((e) => e.id === s.id);
}

// openWorkflow shows the workflow settings in the panel and moves the
// focus to them.
function openWorkflow() {
  select({ kind: "workflow", id: WORKFLOW });
  $("panel-title")?.focus();
}

$("workflow-settings").addEventListener("click", openWorkflow);

function select(sel) {
  state.selected = sel && sel.id ? sel : null;
  graph.render(model());
  showSelection();
  panelProblems();
}

function showSelection() {
  const s = state.selected;
  const item = findSelected();
  $("workflow-settings").setAttribute("aria-current", String(!!item && s.kind === "workflow"));
  if (!item) return panel.clear();
  if (s.kind === "workflow") return panel.showWorkflow();
  if (s.kind === "step") {
    panel.showStep(item, docs.stepIndex(state.doc, s.id));
    return tryIt.show($("panel"), item);
  }
  const src = docs.stepByRef(state.doc, item.from);
  panel.showEdge(item, src && kinds.get(src.type));
}

function panelProblems() {
  const s = state.selected;
  if (!s) return;
  let prefix;
  if (s.kind === "workflow") {
    // The document's own problems: those of no step and no edge.
    const list = (state.check.problems || []).filter((p) => !/^(steps|edges)(\[|$)/.test(p.path))
      .map((p) => ({ rest: p.path, message: p.message }));
    return panel.problems(list);
  }
  if (s.kind === "step") prefix = `steps[${docs.stepIndex(state.doc, s.id)}]`;
  else {
    const e = findSelected();
    if (!e) return;
    prefix = `edges[${e.index}]` + (e.branch >= 0 ? `.choice[${e.branch}]` : "");
  }
  const list = (state.check.problems || [])
    .filter((p) => p.path === prefix || p.path.startsWith(prefix + ".") || p.path.startsWith(prefix + "["))
    .map((p) => ({ rest: p.path.slice(prefix.length).replace(/^\./, ""), message: p.message }));
  panel.problems(list);
}

function remove(sel) {
  if (!sel) return;
  if (sel.kind === "step") change((d) => docs.removeStep(d, sel.id));
  else {
    const e = docs.edgesOf(state.doc).find((x) => x.id === sel.id);
    if (e) change((d) => docs.removeEdge(d, e));
  }
  state.selected = null;
  showSelection();
}

document.addEventListener("keydown", (ev) => {
  if (!canWrite || !state.selected || state.selected.kind !== "edge") return;
  if (ev.target.closest("input, textarea, select")) return;
  if (ev.key === "Delete" || ev.key === "Backspace") remove(state.selected);
});

// ---- palette and the keyboard connect form ----

document.querySelectorAll(".palette-item").forEach((b) => b.addEventListener("click", () => {
  let ref;
  change((d) => {
    ref = docs.addStep(d, kinds.get(b.dataset.type));
    // Among steps placed by hand a new one takes the free place nearest
    // the middle of the view, kept in the layout.
    if (docs.layoutOf(d).size) {
      const at = graph.freeSpot();
      docs.place(d, ref, at.x, at.y);
    }
  });
  select({ kind: "step", id: ref });
}));

function connectForm() {
  const form = $("connect-form");
  if (!form) return;
  const refs = docs.stepsOf(state.doc).map((s) => s.ref).filter((r) => typeof r === "string" && r);
  for (const id of ["connect-from", "connect-to"]) {
    const sel = $(id);
    const keep = sel.value;
    sel.innerHTML = refs.map((r) => `<option>${esc(r)}</option>`).join("");
    if (refs.includes(keep)) sel.value = keep;
  }
  outcomeOptions();
}

function outcomeOptions() {
  const src = docs.stepByRef(state.doc, $("connect-from").value);
  const k = src && kinds.get(src.type);
  const on = $("connect-on");
  const keep = on.value;
  const outs = [...(k ? k.outcomes : ["success"]), "done"];
  on.innerHTML = outs.map((o) => `<option>${o}</option>`).join("");
  if (outs.includes(keep)) on.value = keep;
}

if ($("connect-form")) {
  $("connect-from").addEventListener("change", outcomeOptions);
  $("connect-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const from = $("connect-from").value;
    const to = $("connect-to").value;
    if (from && to) change((d) => docs.connect(d, from, to, $("connect-on").value));
  });
}

// ---- pan and zoom buttons ----

$("zoom-in").addEventListener("click", () => graph.zoom(1.25));
$("zoom-out").addEventListener("click", () => graph.zoom(0.8));
$("zoom-fit").addEventListener("click", () => graph.fit());
$("graph-layout").addEventListener("change", (ev) => graph.direction(ev.target.value));

// Auto place forgets the places set by hand.
const autoPlace = document.createElement("button");
autoPlace.type = "button";
autoPlace.id = "layout-auto";
autoPlace.textContent = "Auto place";
autoPlace.title = "Forget the places of the steps moved by hand";
autoPlace.hidden = true;
$("graph-layout").closest("label").after(autoPlace);
autoPlace.addEventListener("click", () => {
  change((d) => { delete d.layout; });
  graph.fit();
});

// ---- finding a step: by ref, name or type as you type; the matches
// are marked on the graph, Enter or a click selects one and centres it ----

const search = (() => {
  const wrap = document.createElement("div");
  wrap.className = "step-search";
  wrap.innerHTML = `<input type="search" id="step-search" placeholder="Find a step" aria-label="Find a step by ref, name or type"` +
    ` role="combobox" aria-autocomplete="list" aria-expanded="false" aria-controls="step-search-results" autocomplete="off">` +
    `<ul class="step-search-results" id="step-search-results" role="listbox" aria-label="Steps found" hidden></ul>` +
    `<span class="muted small" id="step-search-count" role="status"></span>`;
  $("graph-stats").before(wrap);
  const input = $("step-search");
  const list = $("step-search-results");
  const st = { found: [], active: -1 };

  function find(q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    return docs.stepsOf(state.doc).filter((s) => typeof s.ref === "string" && s.ref).filter((s) => {
      const k = kinds.get(s.type);
      return [s.ref, s.name, s.type, k && k.label].some((v) => typeof v === "string" && v.toLowerCase().includes(q));
    });
  }

  function show() {
    st.found = find(input.value);
    st.active = st.found.length ? Math.max(0, Math.min(st.active, st.found.length - 1)) : -1;
    graph.highlight(st.found.map((s) => s.ref));
    $("step-search-count").textContent = input.value.trim() ? `${st.found.length} found` : "";
    list.innerHTML = st.found.slice(0, 50).map((s, i) => {
      const k = kinds.get(s.type);
      return `<li role="option" id="step-found-${i}" data-ref="${esc(s.ref)}" aria-selected="${i === st.active}">` +
        `<span class="mono">${esc(s.ref)}</span> <span class="sub">${esc(k ? k.label : s.type || "?")}${s.name ? " · " + esc(s.name) : ""}</span></li>`;
    }).join("");
    const open = st.found.length > 0 && document.activeElement === input;
    list.hidden = !open;
    input.setAttribute("aria-expanded", String(open));
    if (st.active >= 0 && open) input.setAttribute("aria-activedescendant", `step-found-${st.active}`);
    else input.removeAttribute("aria-activedescendant");
  }

  function pick(ref) {
    if (!ref) return;
    select({ kind: "step", id: ref });
    graph.center(ref);
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
  }

  input.addEventListener("input", () => { st.active = 0; show(); });
  input.addEventListener("focus", show);
  input.addEventListener("blur", () => setTimeout(() => { list.hidden = true; input.setAttribute("aria-expanded", "false"); }, 150));
  input.addEventListener("keydown", (ev) => {
    const n = Math.min(st.found.length, 50);
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      if (!n) return;
      ev.preventDefault();
      st.active = (st.active + (ev.key === "ArrowDown" ? 1 : n - 1)) % n;
      show();
      const li = $(`step-found-${st.active}`);
      if (li) li.scrollIntoView({ block: "nearest" });
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      if (st.active >= 0 && st.found[st.active]) pick(st.found[st.active].ref);
    } else if (ev.key === "Escape") {
      input.value = "";
      show();
    }
  });
  list.addEventListener("pointerdown", (ev) => ev.preventDefault()); // keep the focus in the box
  list.addEventListener("click", (ev) => {
    const li = ev.target.closest("li");
    if (li) pick(li.dataset.ref);
  });
  return { refresh: () => input.value.trim() && show() };
})();

// ---- save, publish, test run ----

function notice(text, cls = "") {
  const n = $("notice");
  n.textContent = text;
  n.className = `notice-inline ${cls}`;
}

$("source-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (ev.submitter && ev.submitter.id === "run-tests") return runTests();
  const publish = ev.submitter && ev.submitter.id === "publish";
  await check.flush();
  notice(publish ? "Publishing…" : "Saving…");
  const res = await post(publish ? root.dataset.publishUrl : root.dataset.draftUrl, { document: yamlEl.value });
  if (!res.ok) {
    if (res.data && res.data.check) applyCheck(res.data.check, "none");
    return notice((res.data && res.data.error && res.data.error.message) || `failed (${res.status})`, "error");
  }
  applyCheck(res.data, "none");
  state.savedYAML = yamlEl.value;
  dirtyMark();
  if (!publish) return notice(`Draft saved at ${res.data.saved_at}`);
  const { version, version_hash: hash, created } = res.data;
  notice(`${created ? "Published" : "Already published as"} v${version} · ${hash}`);
  const n = $("notice");
  n.dataset.version = version;
  n.dataset.hash = hash;
  if (created) addVersionRow(version, hash);
  if ($("run-needs-version")) {
    $("run-needs-version").remove();
    $("run-start").disabled = false;
    $("run-start").removeAttribute("aria-describedby");
  }
});

function addVersionRow(version, hash) {
  const empty = $("no-versions");
  if (empty) empty.remove();
  const row = document.createElement("tr");
  row.dataset.version = version;
  row.innerHTML = `<td>v${version}</td><td class="mono hash" title="${esc(hash)}">${esc(hash.slice(0, 12))}</td><td>just now</td><td><span class="status ok">published</span></td><td></td>`;
  $("versions").tBodies[0].prepend(row);
}

if ($("run-form")) {
  $("run-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const out = $("run-result");
    out.textContent = "Starting…";
    const res = await post(root.dataset.runUrl, { input: $("run-input").value });
    if (!res.ok) {
      out.textContent = (res.data && res.data.error && res.data.error.message) || `failed (${res.status})`;
      out.className = "error";
      return;
    }
    out.className = "";
    out.innerHTML = `Run <a id="run-link" class="mono" href="${esc(root.dataset.runsBase + res.data.id)}">${esc(res.data.id)}</a> started`;
  });
}

// ---- tests: the document as it stands, run in memory on the server ----

const testsKey = `ductor.tests.${location.pathname}`;
if ($("tests")) {
  const kept = localStorage.getItem(testsKey);
  if (kept) $("tests").value = kept;
  $("tests").addEventListener("input", () => localStorage.setItem(testsKey, $("tests").value));
}

async function runTests() {
  const out = $("test-results");
  const button = $("run-tests");
  button.disabled = true;
  out.innerHTML = `<p class="muted" id="tests-running">Running…</p>`;
  try {
    await check.flush();
    const res = await post(root.dataset.testUrl, { document: yamlEl.value, tests: $("tests").value });
    if (!res.ok || !res.data) {
      const msg = (res.data && res.data.error && res.data.error.message) || `failed (${res.status})`;
      out.innerHTML = `<p class="error" id="tests-error" role="alert">${esc(msg)}</p>`;
      return;
    }
    out.innerHTML = res.data.html;
    const accept = $("tests-accept");
    if (accept && res.data.updated) {
      accept.hidden = false;
      accept.addEventListener("click", () => {
        $("tests").value = res.data.updated;
        localStorage.setItem(testsKey, res.data.updated);
        accept.textContent = "Used: run the tests again";
        accept.disabled = true;
      });
    }
  } finally {
    button.disabled = false;
  }
}

if (!canWrite) yamlEl.readOnly = true;
undoButtons();
redraw();
graph.fit();
root.dataset.ready = "true";
