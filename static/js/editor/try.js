// "Try it": the selected step's expressions evaluated on the server
// against sample data (input, steps.<ref>.output, run, event), from the
// document as it stands: nothing is published, stored or run. The sample
// is pinned per step in this browser; it may be loaded from one of the
// definition's recent runs. For a step over a list (for_each, a
// scatter's items_expr) the item the expressions see is chosen from the
// list the last try found (the first by default), and `now` may be set
// (the server's clock by default); both are pinned with the sample.

import { escapeHTML as esc } from "./cel.js";
import * as docs from "./doc.js";

// createTry wires the section; opts: post, the document's text (after
// pending checks), and the current document.
export function createTry(opts) {
  const t = { ...opts, results: new Map(), items: new Map(), runs: null };
  return { show: (panel, step) => show(t, panel, step) };
}

// storageKey is the pinned sample's key: tenant, definition and step.
function storageKey(ref) {
  const m = /^\/t\/([^/]+)\/definitions\/([^/]+)\//.exec(location.pathname);
  return `ductor.try.${m ? `${m[1]}/${m[2]}` : location.pathname}/${ref}`;
}

// prefill is a sample of the shape the step's expressions read: the run
// input, and the steps upstream of it (the step's own entry too when a
// choice reads it and its output is not computed here).
export function prefill(doc, step) {
  const edges = docs.edgesOf(doc);
  const up = new Set();
  const todo = [step.ref];
  while (todo.length) {
    const ref = todo.pop();
    for (const e of edges) {
      if (e.to === ref && typeof e.from === "string" && !up.has(e.from) && e.from !== step.ref) {
        up.add(e.from);
        todo.push(e.from);
      }
    }
  }
  if (step.type !== "transform" && edges.some((e) => e.from === step.ref && e.branch >= 0)) up.add(step.ref);
  const steps = {};
  for (const ref of [...up].sort()) steps[ref] = { output: null, state: "succeeded" };
  return JSON.stringify({ input: {}, steps }, null, 2);
}

function show(t, panel, step) {
  if (!step || typeof step.ref !== "string" || !step.ref) return;
  const key = storageKey(step.ref);
  t.runs = null; // read again for each step shown: runs come and go
  const pinned = localStorage.getItem(key);
  const sec = document.createElement("details");
  sec.className = "try-it";
  sec.id = "try-it";
  sec.open = t.open === true;
  sec.innerHTML =
    `<summary>Try it</summary>` +
    `<p class="muted small">Evaluates this step's expressions against sample data, from the document as it stands: nothing is published or run, no handler is called.</p>` +
    `<div class="field"><label for="try-run">Sample from a run</label>` +
    `<select id="try-run"><option value="">Choose a recent run…</option></select></div>` +
    `<div class="field"><label for="try-sample">Sample data (JSON: input, steps, run, event)</label>` +
    `<textarea id="try-sample" class="mono" rows="6" spellcheck="false"></textarea>` +
    `<p class="muted small" id="try-pinned" role="status"></p></div>` +
    choicesHTML(step) +
    `<div class="try-actions"><button type="button" id="try-go"${t.canTry ? "" : " disabled"}>Try</button> ` +
    `<button type="button" id="try-reset" class="link">Reset the sample</button></div>` +
    (t.canTry ? "" : `<p class="muted small">Your role may not try steps.</p>`) +
    `<div id="try-results" aria-live="polite"></div>`;
  panel.append(sec);
  const area = sec.querySelector("#try-sample");
  const status = sec.querySelector("#try-pinned");
  area.value = pinned ?? prefill(t.doc(), step);
  status.textContent = pinned !== null ? "Pinned in this browser." : "";
  const pin = (text) => {
    localStorage.setItem(key, text);
    status.textContent = "Pinned in this browser.";
  };
  sec.addEventListener("toggle", () => {
    t.open = sec.open;
    if (sec.open) loadRuns(t, sec);
  });
  if (sec.open) loadRuns(t, sec);
  area.addEventListener("input", () => pin(area.value));
  const choices = wireChoices(t, sec, step, key, () => run(t, sec, step.ref, area.value, choices.values()));
  sec.querySelector("#try-reset").addEventListener("click", () => {
    localStorage.removeItem(key);
    area.value = prefill(t.doc(), step);
    status.textContent = "";
    sec.querySelector("#try-run").value = "";
    choices.reset();
  });
  sec.querySelector("#try-run").addEventListener("change", async (ev) => {
    const id = ev.target.value;
    if (!id) return;
    status.textContent = "Loading the run…";
    const res = await fetch(`${t.runsUrl}/${encodeURIComponent(id)}`, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    const data = await res.json().catch(() => null);
    if (!res.ok || !data) {
      status.textContent = (data && data.error && data.error.message) || `The run could not be loaded (${res.status}).`;
      return;
    }
    area.value = JSON.stringify(data.sample, null, 2);
    pin(area.value);
    status.textContent = `Pinned in this browser: the sample of run ${id.slice(0, 8)}` +
      (data.left_out && data.left_out.length ? ` (too large to load: ${data.left_out.join(", ")})` : "") + ".";
  });
  sec.querySelector("#try-go").addEventListener("click", () => run(t, sec, step.ref, area.value, choices.values()));
  const last = t.results.get(step.ref);
  if (last) sec.querySelector("#try-results").innerHTML = last;
}

async function loadRuns(t, sec) {
  const sel = sec.querySelector("#try-run");
  if (!t.runs) {
    t.runs = fetch(t.runsUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : { runs: [] }))
      .then((d) => d.runs || [])
      .catch(() => []);
  }
  const runs = await t.runs;
  if (sel.options.length > 1) return;
  if (!runs.length) {
    sel.options[0].textContent = "No run of this definition yet";
    sel.disabled = true;
    return;
  }
  for (const r of runs) {
    const o = document.createElement("option");
    o.value = r.id;
    o.textContent = `${r.id.slice(0, 8)} · ${r.status} · v${r.version} · ${new Date(r.created_at).toLocaleString()}`;
    sel.append(o);
  }
}

async function run(t, sec, ref, sample, chosen) {
  const out = sec.querySelector("#try-results");
  const button = sec.querySelector("#try-go");
  button.disabled = true;
  out.innerHTML = `<p class="muted" id="try-running">Trying…</p>`;
  try {
    const document = await t.documentText();
    const res = await t.post(t.url, { document, step: ref, sample, ...chosen });
    const err = res.data && res.data.error;
    let html = "";
    if (!res.ok) html += `<p class="error" id="try-error" role="alert">${esc((err && err.message) || `failed (${res.status})`)}</p>`;
    const ans = res.ok ? res.data : err && err.details;
    if (ans && Array.isArray(ans.results)) html += resultsHTML(ans);
    out.innerHTML = html;
    if (ans && Array.isArray(ans.results)) foundItems(t, sec, ref, ans);
    t.results.set(ref, html);
    out.scrollIntoView({ block: "nearest" });
  } finally {
    button.disabled = !t.canTry;
  }
}

function resultsHTML(ans) {
  const items = ans.results.map((r) => {
    const cls = r.ok ? (r.taken ? "ok taken" : "ok") : "failed";
    const value = r.ok
      ? (r.expr ? `<pre class="mono try-value" tabindex="0">${esc(JSON.stringify(r.value, null, 2) ?? "null")}</pre>` : "")
      : `<p class="error try-error">${esc(r.error)}</p>`;
    const branch = r.to ? ` <span class="try-branch">→ <span class="mono">${esc(r.to)}</span>${r.taken ? ` <span class="status ok">taken</span>` : ""}</span>` : "";
    return `<li class="try-result ${cls}" data-path="${esc(r.path)}">` +
      `<div><span class="mono try-path">${esc(r.path)}</span>${branch}</div>` +
      (r.expr ? `<code class="mono try-expr">${esc(r.expr)}</code>` : "") + value +
      (r.note ? `<p class="muted small">${esc(r.note)}</p>` : "") + `</li>`;
  }).join("");
  const outcome = ans.outcome ? `<p id="try-outcome"><strong>Outcome:</strong> <span class="mono">${esc(ans.outcome)}</span></p>` : "";
  const none = ans.results.length ? "" : `<p class="muted">This step has no expression to try.</p>`;
  const at = ans.now ? `<p class="muted small" id="try-at">At <span class="mono">${esc(ans.now)}</span>` +
    (ans.item !== undefined && ans.item !== null ? `, on the item at index <span class="mono">${esc(String(ans.item))}</span>` : "") + `.</p>` : "";
  return `${outcome}${at}${none}<ul class="try-list" id="try-list">${items}</ul>`;
}

// ---- the item and the time the expressions see ----

// MAX_ITEM_OPTIONS bounds the items the select offers.
const MAX_ITEM_OPTIONS = 200;

function overList(step) {
  return (typeof step.for_each === "string" && step.for_each.trim() !== "") || step.type === "scatter";
}

function choicesHTML(step) {
  const item = overList(step)
    ? `<div class="field"><label for="try-item">Item</label><select id="try-item" aria-describedby="try-item-help"></select>` +
      `<p class="muted small" id="try-item-help">The element of <span class="mono">${step.type === "scatter" ? "items_expr" : "for_each"}</span>` +
      ` the expressions see as <span class="mono">item</span>; a try lists them here.</p></div>`
    : "";
  return `<div class="try-choices">${item}<div class="field"><label for="try-now">now</label>` +
    `<input id="try-now" class="mono" spellcheck="false" autocomplete="off" placeholder="the server's clock" aria-describedby="try-now-help">` +
    `<p class="muted small" id="try-now-help">The time the expressions see as <span class="mono">now</span>, in RFC 3339 (2025-01-02T15:04:05Z); empty, the server's clock. ` +
    `<button type="button" class="link" id="try-now-set">Use the time now</button></p></div></div>`;
}

function savedChoices(key) {
  try {
    const v = JSON.parse(localStorage.getItem(key) || "{}");
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

// wireChoices drives the item select and the now input, pinned per step;
// choosing an item tries again.
function wireChoices(t, sec, step, key, retry) {
  const ckey = `${key}#choices`;
  const item = sec.querySelector("#try-item");
  const now = sec.querySelector("#try-now");
  const saved = savedChoices(ckey);
  now.value = typeof saved.now === "string" ? saved.now : "";
  if (item) fillItems(item, t.items.get(step.ref), Number.isInteger(saved.item) ? saved.item : 0);
  const save = () => localStorage.setItem(ckey, JSON.stringify({ item: item ? Number(item.value) : 0, now: now.value.trim() }));
  now.addEventListener("input", save);
  sec.querySelector("#try-now-set").addEventListener("click", () => {
    now.value = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    save();
    now.focus();
  });
  if (item) item.addEventListener("change", () => { save(); if (t.canTry) retry(); });
  return {
    values: () => ({ item: item ? item.value : "", now: now.value.trim() }),
    reset: () => {
      localStorage.removeItem(ckey);
      now.value = "";
      if (item) fillItems(item, t.items.get(step.ref), 0);
    },
  };
}

// fillItems offers the list's items by index and a glimpse of each (the
// first alone before a try has found the list).
function fillItems(sel, list, chosen) {
  const n = Array.isArray(list) ? Math.min(list.length, MAX_ITEM_OPTIONS) : 0;
  const opts = [];
  for (let i = 0; i < n; i++) opts.push(`<option value="${i}">${i}: ${esc(glimpse(list[i]))}</option>`);
  if (!n) opts.push(`<option value="0">the first (index 0)</option>`);
  if (chosen >= Math.max(n, 1)) opts.push(`<option value="${chosen}">index ${chosen}</option>`);
  sel.innerHTML = opts.join("");
  sel.value = String(chosen);
}

function glimpse(v) {
  const s = JSON.stringify(v) ?? "null";
  return s.length > 48 ? `${s.slice(0, 47)}…` : s;
}

// foundItems keeps the list a try found, for the item select.
function foundItems(t, sec, ref, ans) {
  const r = ans.results.find((x) => (x.path === "for_each" || x.path === "with.items_expr") && x.ok && Array.isArray(x.value));
  if (!r) return;
  t.items.set(ref, r.value);
  const sel = sec.querySelector("#try-item");
  if (sel) fillItems(sel, r.value, Number(sel.value) || 0);
}
