// The run inspector's live view: poll the run's states about once a
// second, recolour the graph's nodes and the status badges, and say when
// the details below are out of date. The page works without it.

const root = document.getElementById("inspector");
const POLL_MS = 1000;

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

function apply(live) {
  setStatus(document.getElementById("run-status"), live.status);
  for (const [ref, node] of Object.entries(live.nodes)) paintNode(ref, node);
  document.getElementById("run-transitions").textContent = String(live.transition_count);
  if (String(live.transition_count) !== root.dataset.transitions) {
    document.getElementById("live-note").hidden = false;
  }
  root.dataset.final = String(live.final);
}

async function poll() {
  try {
    const res = await fetch(root.dataset.live, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (res.ok) apply(await res.json());
  } catch {
    // A failed poll is retried on the next round.
  }
  if (root.dataset.final !== "true") setTimeout(poll, POLL_MS);
}

if (root && root.dataset.final !== "true") setTimeout(poll, POLL_MS);
