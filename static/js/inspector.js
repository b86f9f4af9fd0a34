// The run inspector's live view. A stream of server-sent events says each
// time the run changes: the graph's nodes and the status badges are
// repainted at once, and every region of the page (data-region) is
// refreshed from the page itself, at most about once a second, keeping
// what the person is doing (focus, what they typed, open details). The
// stream opens on every load, so it resumes after an action (a retry
// reopens an ended run), and the server ends it once the run has ended
// with nothing to come. The page works without script.

import { graphView } from "./graphview.js";

const root = document.getElementById("inspector");
const REFRESH_MS = 1000;

function setStatus(el, state) {
  if (!el || el.textContent === state) return;
  el.textContent = state;
  el.className = "status " + state;
}

function paintNode(ref, node) {
  const g = root.querySelector(`g.gnode[data-ref="${CSS.escape(ref)}"]`);
  if (g && g.dataset.state !== node.state) {
    g.classList.remove("st-" + g.dataset.state);
    g.classList.add("st-" + node.state);
    g.dataset.state = node.state;
    const label = g.querySelector(".gstate");
    if (label) label.textContent = node.state;
    const title = g.querySelector("title");
    if (title) title.textContent = `${ref}: ${node.state}`;
  }
  setStatus(root.querySelector(`[data-state-of="${CSS.escape(ref)}"]`), node.state);
}

function paint(live) {
  setStatus(document.getElementById("run-status"), live.status);
  for (const [ref, node] of Object.entries(live.nodes)) paintNode(ref, node);
  const tc = document.getElementById("run-transitions");
  if (tc) tc.textContent = String(live.transition_count);
  root.dataset.final = String(live.final);
  if (String(live.transition_count) !== root.dataset.transitions) {
    root.dataset.transitions = String(live.transition_count);
    refreshSoon();
  }
}

// ---- refreshing the regions from the page ----

let timer = null;
let last = 0;
let running = false;

function refreshSoon() {
  if (timer) return;
  const wait = Math.max(0, last + REFRESH_MS - Date.now());
  timer = setTimeout(refresh, wait);
}

async function refresh() {
  timer = null;
  if (running) return refreshSoon();
  running = true;
  last = Date.now();
  try {
    const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (res.ok) swap(new DOMParser().parseFromString(await res.text(), "text/html"));
  } catch {
    // The next change refreshes again.
  } finally {
    running = false;
    announce();
  }
}

// busy reports a region the person is using: a field in it with the
// focus, or changed from what the page sent. Focus elsewhere in it (a
// link, a button, the panel itself) does not hold it up: the element with
// the focus gets it back once the region is replaced (swap).
function busy(el) {
  const a = document.activeElement;
  if (a && el.contains(a) && a.matches("input, textarea, select")) return true;
  for (const f of el.querySelectorAll("input, textarea, select")) {
    if (f.type === "hidden") continue;
    if (changed(f)) return true;
  }
  return false;
}

function changed(f) {
  if (f.tagName === "SELECT") {
    const def = [...f.options].findIndex((o) => o.defaultSelected);
    return f.selectedIndex !== Math.max(def, 0); // no option marked: the first is the default
  }
  if (f.type === "checkbox" || f.type === "radio") return f.checked !== f.defaultChecked;
  return f.value !== f.defaultValue;
}

function swap(doc) {
  for (const el of root.querySelectorAll("[data-region]")) {
    const fresh = doc.getElementById(el.id);
    if (!fresh || busy(el) || fresh.innerHTML === el.innerHTML) continue;
    // The element with the focus, by id, has it again once replaced.
    const active = el.contains(document.activeElement) && document.activeElement.id;
    const open = new Set([...el.querySelectorAll("details[open]")].map(keyOf));
    const closed = new Set([...el.querySelectorAll("details:not([open])")].map(keyOf));
    el.innerHTML = fresh.innerHTML;
    for (const d of el.querySelectorAll("details")) {
      if (open.has(keyOf(d))) d.open = true;
      else if (closed.has(keyOf(d))) d.open = false;
    }
    const again = active && document.getElementById(active);
    if (again) {
      if (again.tabIndex < 0) again.tabIndex = -1;
      again.focus({ preventScroll: true });
    }
  }
  const graph = doc.getElementById("graph-body");
  const mine = document.getElementById("graph-body");
  if (graph && mine && graph.innerHTML !== mine.innerHTML) mine.innerHTML = graph.innerHTML;
}

// ---- the live note ----

// The note says what changed since it last spoke (or since the page
// loaded): the run's new status, each step that ended, waits or is held,
// a scatter's children that failed, at a UTC time like every other time
// on the page. It is kept apart from the badges, which the stream paints
// at once, so a change is seen whichever of the two came first; while
// nothing of that changes the note is left alone.
const QUIET = new Set(["pending", "ready", "running"]);
let announced = snapshot();

function snapshot() {
  const nodes = new Map();
  for (const g of root ? root.querySelectorAll("#graph-body g.gnode[data-ref]") : []) {
    nodes.set(g.dataset.ref, { state: g.dataset.state || "", failed: Number(g.dataset.failed || 0) });
  }
  return { status: statusText(), nodes };
}

function announce() {
  const now = snapshot();
  const said = [];
  if (now.status && now.status !== announced.status) said.push(`run ${now.status}`);
  for (const [ref, n] of now.nodes) {
    const was = announced.nodes.get(ref);
    if (!was) continue;
    if (n.state !== was.state && !QUIET.has(n.state)) said.push(`step ${ref} ${n.state}`);
    const more = n.failed - was.failed;
    const kids = (k) => `${k} ${k === 1 ? "child" : "children"}`;
    if (more > 0 && more === n.failed) said.push(`${kids(more)} of ${ref} failed`);
    else if (more > 0) said.push(`${kids(more)} more of ${ref} failed (${n.failed} in all)`);
  }
  announced = now;
  const note = document.getElementById("live-note");
  if (!note || said.length === 0) return;
  const at = new Date().toISOString().slice(11, 19) + " UTC";
  const text = said.join(", ");
  note.textContent = `${text[0].toUpperCase()}${text.slice(1)} at ${at}`;
}

function statusText() {
  const s = document.getElementById("run-status");
  return s ? s.textContent.trim() : "";
}

function keyOf(d) {
  return d.id || (d.querySelector("summary") || d).textContent.trim();
}

// ---- the stream ----

function listen() {
  const es = new EventSource(root.dataset.events);
  es.addEventListener("run", (ev) => paint(JSON.parse(ev.data)));
  es.addEventListener("end", () => {
    es.close();
    root.dataset.live = "ended";
    refreshSoon();
  });
  root.dataset.live = "open";
}

if (root) {
  const wrap = document.getElementById("graph-wrap");
  const svg = document.getElementById("run-graph");
  if (wrap && svg && window.ResizeObserver) {
    const $ = (id) => document.getElementById(id);
    window.ductorGraph = graphView(wrap, svg, {
      zoomIn: $("graph-zoom-in"), zoomOut: $("graph-zoom-out"), fit: $("graph-fit"), actual: $("graph-actual"),
    });
  }
  if (window.EventSource) listen();
}
