// The side panel: fields made for the selected step's type (required
// fields marked, enums as selects, durations checked, CEL with
// highlighting) or the selected edge's outcome, with the server's
// problems shown on the field they belong to. Nested settings (a
// scatter's `do`, a human_loop's case fields, http headers, body and
// expected statuses, an event_set's events, a step's concurrency) get
// sub-forms with their JSON one toggle away; handlers, people, scatters and
// definitions get pickers. With no step chosen the panel shows the
// workflow settings: the definition-wide fields (flow control, triggers,
// timeout, input schema, limits), drawn and read back the same way.

import { highlight, escapeHTML as esc } from "./cel.js";
import { getPath, stepByRef } from "./doc.js";
import { rowsForm, readRows, rowAction, pickerOptions, comboAttrs, comboList, createCombos } from "./forms.js";
import { validDuration } from "./subforms.js";

export { validDuration };

// SUB_FORMS are the field kinds edited by a sub-form, or as JSON.
const SUB_FORMS = new Set(["template", "schema", "headers", "events", "statuses", "body", "flow", "auth", "strings",
  "rules", "debounce", "rate", "triggers"]);

// WORKFLOW is the selection of the workflow settings: no step's ref.
export const WORKFLOW = ":workflow";

export function createPanel(root, opts) {
  const p = { root, opts, sel: null, raw: new Set(), hints: null };
  root.addEventListener("input", (ev) => onInput(p, ev));
  root.addEventListener("change", (ev) => onInput(p, ev, true));
  root.addEventListener("click", (ev) => {
    if (ev.target.closest("#delete-step, #delete-edge")) opts.onDelete(p.sel);
    if (ev.target.closest("#panel-workflow")) opts.onWorkflow();
    onClick(p, ev);
  });
  p.combos = createCombos(root, (input) => {
    const step = current(p);
    return step ? pickerOptions(input.dataset.picker, step, opts.doc(), p.hints) : [];
  }, (input, value) => pickValue(p, input, value));
  if (opts.canWrite && opts.hintsUrl) {
    fetch(opts.hintsUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((h) => {
        p.hints = h;
        root.dataset.hints = h ? "loaded" : "none";
        p.combos.refresh();
      })
      .catch(() => { root.dataset.hints = "none"; });
  }
  return {
    showStep: (step, index) => showStep(p, step, index),
    showEdge: (edge, sourceKind) => showEdge(p, edge, sourceKind),
    showWorkflow: () => showWorkflow(p),
    clear: () => clear(p),
    problems: (list) => showProblems(p, list),
    busy: () => root.contains(document.activeElement) && document.activeElement !== root,
  };
}

function clear(p) {
  p.sel = null;
  p.root.setAttribute("aria-label", "Selected step");
  p.root.innerHTML = `<p class="muted">Select a step to edit its settings, or open the workflow settings.</p>` +
    `<button type="button" class="small" id="panel-workflow">Workflow settings</button>`;
}

// current is the selected step as the document holds it now, or for the
// workflow settings the document itself.
function current(p) {
  if (p.sel && p.sel.kind === "workflow") return p.opts.doc();
  return p.sel && p.sel.kind === "step" ? stepByRef(p.opts.doc(), p.sel.id) : null;
}

// refield draws one field of the selected step again, in place,
// keeping the focus on the element of the same id.
function refield(p, path) {
  const step = current(p);
  const f = p.defs && p.defs.get(path);
  const el = [...p.root.querySelectorAll(".field[data-field]")].find((x) => x.dataset.field === path);
  if (!step || !f || !el) return;
  const focus = document.activeElement && p.root.contains(document.activeElement) ? document.activeElement.id : "";
  el.outerHTML = field(p, step, f, p.opts.canWrite ? "" : " disabled");
  p.root.querySelectorAll(".cel textarea").forEach(paintCEL);
  if (focus && document.getElementById(focus)) document.getElementById(focus).focus();
}

function showStep(p, step, index) {
  const kind = p.opts.kinds.get(step.type);
  p.sel = { kind: "step", id: step.ref, index };
  p.root.setAttribute("aria-label", "Selected step");
  const dis = p.opts.canWrite ? "" : " disabled";
  const mode = modeOf(kind, step);
  const fields = kind ? kind.fields.filter((f) => !f.mode || f.mode === mode).map((f) => ({ ...f, path: "with." + f.name })) : [];
  const stepFields = p.opts.common.map((f) => ({ ...f, path: f.name }));
  if (kind && kind.for_each) stepFields.push({ ...p.opts.forEach, path: p.opts.forEach.name });
  if (kind && kind.retry) stepFields.push(...p.opts.retry.map((f) => ({ ...f, path: f.name })));
  p.root.innerHTML =
    `<h2><span class="icon" aria-hidden="true">${esc(kind ? kind.icon : "?")}</span> ${esc(kind ? kind.label : step.type)} <span class="muted mono">${esc(step.type)}</span></h2>` +
    `<ul class="panel-problems" id="panel-problems"></ul>` +
    field(p, step, { name: "ref", kind: "text", required: true, path: "ref" }, dis) +
    (kind ? "" : `<p class="error">Unknown step type: fix it in the YAML.</p>`) +
    `<fieldset class="with"><legend>with</legend>${fields.map((f) => field(p, step, f, dis)).join("")}</fieldset>` +
    `<details class="step-settings"><summary>Step settings</summary>${stepFields.map((f) => field(p, step, f, dis)).join("")}</details>` +
    (p.opts.canWrite ? `<button type="button" class="danger" id="delete-step">Delete step</button>` : "");
  p.root.querySelectorAll(".cel textarea").forEach(paintCEL);
}

// showWorkflow draws the definition-wide settings: general ones, flow
// control, triggers, then limits (open when one is set).
function showWorkflow(p) {
  const doc = p.opts.doc();
  p.sel = { kind: "workflow", id: WORKFLOW };
  p.root.setAttribute("aria-label", "Workflow settings");
  p.defs = new Map();
  const dis = p.opts.canWrite ? "" : " disabled";
  const fs = (p.opts.workflow || []).map((f) => ({ ...f, path: f.name }));
  const group = (names) => fs.filter((f) => names.includes(f.name)).map((f) => field(p, doc, f, dis)).join("");
  const limits = fs.filter((f) => f.name.startsWith("limits."));
  const hasLimits = doc && doc.limits && typeof doc.limits === "object" && Object.keys(doc.limits).length > 0;
  p.root.innerHTML =
    `<h2 id="panel-title" tabindex="-1">Workflow settings <span class="muted mono">${esc(doc && typeof doc.key === "string" ? doc.key : "")}</span></h2>` +
    `<ul class="panel-problems" id="panel-problems"></ul>` +
    `<fieldset class="workflow-general"><legend>General</legend>${group(["name", "description", "timeout", "output_expr", "input_schema"])}</fieldset>` +
    `<fieldset class="workflow-flow"><legend>Flow control</legend>${group(["concurrency", "debounce", "throttle", "rate_limit"])}</fieldset>` +
    `<fieldset class="workflow-triggers"><legend>Triggers</legend>${group(["triggers"])}</fieldset>` +
    `<details class="workflow-limits"${hasLimits ? " open" : ""}><summary>Limits</summary>${limits.map((f) => field(p, doc, f, dis)).join("")}</details>`;
  p.root.querySelectorAll(".cel textarea").forEach(paintCEL);
}

function field(p, step, f, dis) {
  (p.defs ||= new Map()).set(f.path, f);
  const wf = p.sel && p.sel.kind === "workflow";
  const id = (wf ? "w-" : "f-") + f.path.replace(/[^a-z0-9_]/gi, "-");
  const v = getPath(step, f.path);
  const mark = f.required ? ` <abbr class="req" title="required">*</abbr>` : f.one_of ? ` <span class="muted" title="exactly one of the ${esc(f.one_of)} fields">(one of)</span>` : "";
  let label = `<label for="${id}">${esc(f.name)}${mark}</label>`;
  const common = `id="${id}" data-path="${esc(f.path)}" data-kind="${f.kind}"${dis}${f.required ? " required aria-required=\"true\"" : ""}`;
  let input;
  if (SUB_FORMS.has(f.kind)) {
    const rawKey = `${wf ? WORKFLOW : step.ref} ${f.path}`;
    let sub = p.raw.has(rawKey) ? null : f.kind === "template" ? templateForm(p, step, f, id, v, dis) : rowsForm(f.kind, id, f.path, v, dis);
    const raw = sub === null;
    const toggle = `<button type="button" class="json-toggle small" id="${id}-json" data-json="${esc(rawKey)}" aria-pressed="${raw}"` +
      ` title="${raw ? "Edit with the form" : "Edit as JSON"}" aria-label="${esc(f.name)}: edit as JSON">JSON</button>`;
    if (raw) sub = `<textarea id="${id}" data-path="${esc(f.path)}" data-kind="json" rows="4" class="mono" spellcheck="false"${dis}>${esc(v === undefined ? "" : JSON.stringify(v, null, 1))}</textarea>`;
    label = `<div class="field-head">${raw ? `<label for="${id}">${esc(f.name)}${mark}</label>` : `<span class="label" id="${id}-label">${esc(f.name)}${mark}</span>`}${toggle}</div>`;
    if (!raw) sub = sub.replace(/^<(div|fieldset) /, `<$1 role="group" aria-labelledby="${id}-label" `);
    const help = f.help ? `<p class="help muted small">${esc(f.help)}</p>` : "";
    return `<div class="field sub-field" data-field="${esc(f.path)}">${label}${sub}${help}<p class="field-error local" hidden></p><p class="field-error server" hidden></p></div>`;
  }
  if (f.picker && f.kind !== "list") {
    const shown = typeof v === "object" && v !== null ? JSON.stringify(v) : v ?? "";
    input = `<div class="combo"><input ${common} ${comboAttrs(id, f.picker)} class="mono"${f.kind === "int" ? ' inputmode="numeric"' : ""} value="${esc(shown)}">${comboList(id, `Suggestions for ${f.name}`)}</div>`;
    const help = f.help ? `<p class="help muted small">${esc(f.help)}</p>` : "";
    return `<div class="field" data-field="${esc(f.path)}">${label}${input}${help}<p class="field-error local" hidden></p><p class="field-error server" hidden></p></div>`;
  }
  switch (f.kind) {
    case "enum":
      input = `<select ${common}><option value="">(default: ${esc(f.default)})</option>${f.options.map((o) => `<option${o === v ? " selected" : ""}>${esc(o)}</option>`).join("")}</select>`;
      break;
    case "expr":
      input = `<div class="cel"><pre aria-hidden="true"></pre><textarea ${common} rows="${f.name === "expr" ? 3 : 1}" spellcheck="false" class="mono">${esc(v ?? "")}</textarea></div>`;
      break;
    case "list":
      input = `<textarea ${common} rows="2" class="mono" placeholder="one per line">${esc(Array.isArray(v) ? v.join("\n") : v ?? "")}</textarea>`;
      if (f.picker && !dis) {
        const add = `${id}-add`;
        input += `<div class="combo list-add"><input id="${add}" ${comboAttrs(add, f.picker)} data-add-to="${id}" class="mono" placeholder="add: a member or role:NAME" aria-label="Add to ${esc(f.name)}">` +
          `${comboList(add, `Suggestions for ${f.name}`)}<button type="button" class="small" data-add-from="${add}">Add</button></div>`;
      }
      break;
    case "number":
      input = `<input ${common} type="number" step="any" class="mono" value="${esc(v ?? "")}">`;
      break;
    case "bool":
      input = `<select ${common}><option value="">(default: ${esc(f.default || "false")})</option>${["true", "false"].map((o) => `<option${String(v) === o ? " selected" : ""}>${o}</option>`).join("")}</select>`;
      break;
    case "json":
      input = `<textarea ${common} rows="3" class="mono" spellcheck="false">${esc(v === undefined ? "" : JSON.stringify(v, null, 1))}</textarea>`;
      break;
    case "int":
      input = `<input ${common} type="number" step="1" class="mono" value="${esc(v ?? "")}">`;
      break;
    case "join":
      input = joinInput(id, f, v, dis);
      break;
    default:
      input = `<input ${common} class="${f.kind === "text" ? "" : "mono"}" value="${esc(typeof v === "object" && v !== null ? JSON.stringify(v) : v ?? "")}"${f.kind === "duration" ? ' placeholder="90s, 1h30m or PT90S"' : ""}>`;
  }
  const help = f.help ? `<p class="help muted small">${esc(f.help)}</p>` : "";
  return `<div class="field" data-field="${esc(f.path)}">${label}${input}${help}<p class="field-error local" hidden></p><p class="field-error server" hidden></p></div>`;
}

// joinInput edits join: all, any, or {at_least: N, cancel_rest}: a mode,
// N and "cancel the rest", read back together by joinValue.
function joinInput(id, f, v, dis) {
  const obj = v && typeof v === "object" ? v : null;
  const mode = obj ? "at_least" : v || "";
  const n = obj ? obj.at_least ?? "" : "";
  const rest = obj && obj.cancel_rest === true;
  const attrs = `data-path="${esc(f.path)}" data-kind="join"${dis}`;
  return `<div class="join-input"><select id="${id}" ${attrs} data-join="mode"><option value="">(default: all)</option>` +
    f.options.map((o) => `<option value="${o}"${o === mode ? " selected" : ""}>${o === "at_least" ? "at least N" : o}</option>`).join("") +
    `</select> <input ${attrs} data-join="n" type="number" min="1" step="1" class="mono" aria-label="N: incoming edges needed" value="${esc(n)}"${mode === "at_least" ? "" : " hidden"}>` +
    ` <label class="inline"${mode === "at_least" ? "" : " hidden"}><input ${attrs} data-join="rest" type="checkbox"${rest ? " checked" : ""}> cancel the rest</label></div>`;
}

// joinValue is the join the inputs of a join field say.
function joinValue(box) {
  const mode = box.querySelector("[data-join=mode]").value;
  const nInput = box.querySelector("[data-join=n]");
  const restBox = box.querySelector("[data-join=rest]");
  nInput.hidden = restBox.closest("label").hidden = mode !== "at_least";
  if (mode !== "at_least") return mode || undefined;
  if (!/^\d+$/.test(nInput.value)) throw new Error("N must be a whole number from 1");
  const v = { at_least: Number(nInput.value) };
  if (restBox.checked) v.cancel_rest = true;
  return v;
}

// parse turns an input's text into the value the document holds, or
// throws a message for the field.
function parse(kind, text) {
  switch (kind) {
    case "int":
      if (text === "") return undefined;
      if (!/^-?\d+$/.test(text)) throw new Error("must be a whole number");
      return Number(text);
    case "list":
      return text.split("\n").map((s) => s.trim()).filter(Boolean);
    case "json":
      if (text.trim() === "") return undefined;
      try {
        return JSON.parse(text);
      } catch {
        throw new Error("must be JSON");
      }
    case "duration":
      if (!validDuration(text)) throw new Error("must be a duration like 90s, 1h30m or PT90S");
      return text;
    case "number":
      if (text.trim() === "") return undefined;
      if (!Number.isFinite(Number(text))) throw new Error("must be a number");
      return Number(text);
    case "bool":
      return text === "" ? undefined : text === "true";
    default:
      return text;
  }
}

// modeOf is the step's mode (its kind's mode field, else that field's
// default), which decides the fields that apply; "" for kinds without.
function modeOf(kind, step) {
  if (!kind || !kind.mode_field) return "";
  const v = step.with && step.with[kind.mode_field];
  if (typeof v === "string" && v) return v;
  const f = kind.fields.find((x) => x.name === kind.mode_field);
  return (f && f.default) || "";
}

// modeChanged sets a step's mode and drops the settings of its other
// modes, which the compiler refuses in this one; a scatter going inline
// gets its kind's sample template when it has none.
function modeChanged(p, kind, step, value) {
  const next = { ...step, with: { ...(step.with || {}), [kind.mode_field]: value } };
  const mode = modeOf(kind, next);
  const drop = kind.fields.filter((f) => f.mode && f.mode !== mode && step.with && step.with[f.name] !== undefined).map((f) => "with." + f.name);
  const add = kind.fields.filter((f) => f.mode === mode && !(step.with && step.with[f.name] !== undefined) &&
    kind.sample && kind.sample[f.name] !== undefined).map((f) => ["with." + f.name, structuredClone(kind.sample[f.name])]);
  p.opts.onMode(p.sel, "with." + kind.mode_field, value || undefined, drop, add);
}

function onInput(p, ev, committed) {
  const el = ev.target;
  if (el.closest(".cel")) paintCEL(el);
  const rows = el.closest && el.closest(".rows-form, .flow-form");
  if (rows && p.sel && el.dataset.col) return rowsChanged(p, rows);
  if (el.dataset && el.dataset.kind === "template-type") {
    if (committed || ev.type === "input") templateType(p, el);
    return;
  }
  if (!p.sel || !el.dataset || (!el.dataset.path && !el.dataset.edge)) return;
  if (el.dataset.edge) return p.opts.onEdgeChange(p.sel, el.dataset.edge, el.value);
  const local = el.closest(".field").querySelector(".field-error.local");
  let value;
  try {
    value = el.dataset.kind === "join" ? joinValue(el.closest(".join-input")) : parse(el.dataset.kind, el.value);
    local.hidden = true;
  } catch (err) {
    local.textContent = err.message;
    local.hidden = false;
    if (el.dataset.kind !== "duration") return;
    value = el.value; // the server reports it too, on the step
  }
  if (el.dataset.path === "ref") {
    if (committed) p.opts.onRename(p.sel, el.value.trim());
    return;
  }
  const step = p.sel.kind === "step" ? current(p) : null;
  const kind = step && p.opts.kinds.get(step.type);
  if (kind && kind.mode_field && el.dataset.path === "with." + kind.mode_field) {
    if (modeOf(kind, { ...step, with: { ...(step.with || {}), [kind.mode_field]: value } }) !== modeOf(kind, step)) {
      return modeChanged(p, kind, step, value);
    }
  }
  p.opts.onField(p.sel, el.dataset.path, value);
}

// rowsChanged sends the value of a rows sub-form.
function rowsChanged(p, box) {
  const local = box.closest(".field").querySelector(".field-error.local");
  let value;
  try {
    value = readRows(box);
    local.hidden = true;
  } catch (err) {
    local.textContent = err.message;
    local.hidden = false;
    return;
  }
  p.opts.onField(p.sel, box.dataset.path, value);
}

function onClick(p, ev) {
  const t = ev.target.closest("button");
  if (!t || !p.root.contains(t) || !p.sel) return;
  if (t.dataset.json) {
    if (p.raw.has(t.dataset.json)) p.raw.delete(t.dataset.json);
    else p.raw.add(t.dataset.json);
    refield(p, t.closest(".field[data-field]").dataset.field);
    return;
  }
  if (t.dataset.row) {
    const box = t.closest(".rows-form"); // before a removed row takes the button with it
    if (rowAction(t)) rowsChanged(p, box);
    return;
  }
  if (t.dataset.addFrom) {
    const input = document.getElementById(t.dataset.addFrom);
    if (input.value.trim()) pickValue(p, input, input.value.trim());
    input.focus();
  }
}

// pickValue takes a picker's choice: into its field, or, for a list,
// onto the end of the list.
function pickValue(p, input, value) {
  if (input.dataset.addTo) {
    const list = document.getElementById(input.dataset.addTo);
    const items = list.value.split("\n").map((s) => s.trim()).filter(Boolean);
    if (!items.includes(value)) items.push(value);
    list.value = items.join("\n");
    input.value = "";
    list.dispatchEvent(new Event("input", { bubbles: true }));
    list.dispatchEvent(new Event("change", { bubbles: true }));
    return;
  }
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  input.dispatchEvent(new Event("change", { bubbles: true }));
}

// templateForm is a scatter's `do` as a form: its type, then that
// type's fields (and, for task and http, its timeout and retry policy),
// described as a step's are.
function templateForm(p, step, f, id, v, dis) {
  if (v !== undefined && (!v || typeof v !== "object" || Array.isArray(v))) return null;
  const t = v && typeof v.type === "string" ? v.type : "";
  const types = p.opts.templateTypes || ["task", "http", "transform"];
  if (t && !types.includes(t)) return null;
  const kind = p.opts.kinds.get(t);
  const inner = kind ? kind.fields.map((x) => ({ ...x, path: `${f.path}.with.${x.name}` })) : [];
  if (kind && kind.retry) inner.push(...p.opts.retry.map((x) => ({ ...x, path: `${f.path}.${x.name}` })));
  return `<fieldset class="subform template-form" data-sub="template" data-path="${esc(f.path)}">` +
    `<div class="field" data-field="${esc(f.path)}.type"><label for="${id}-type">type</label>` +
    `<select id="${id}-type" data-path="${esc(f.path)}.type" data-kind="template-type"${dis}>` +
    `<option value=""${t ? "" : " selected"}>(none)</option>${types.map((x) => `<option${x === t ? " selected" : ""}>${esc(x)}</option>`).join("")}</select>` +
    `<p class="field-error server" hidden></p></div>` +
    inner.map((x) => field(p, step, x, dis)).join("") + `</fieldset>`;
}

// templateType starts the template over as the type chosen, with that
// type's sample settings; a task or http keeps its timeout, retry and
// concurrency.
function templateType(p, el) {
  const step = current(p);
  if (!step) return;
  const path = el.dataset.path.replace(/\.type$/, "");
  const old = getPath(step, path) || {};
  if (old.type === el.value) return;
  const kind = p.opts.kinds.get(el.value);
  let value;
  if (kind) {
    value = { type: kind.type, with: structuredClone(kind.sample || {}) };
    if (kind.retry) for (const k of ["timeout", "retry", "concurrency"]) if (old[k] !== undefined) value[k] = old[k];
  }
  p.opts.onField(p.sel, path, value);
  refield(p, path);
}

function paintCEL(textarea) {
  textarea.previousElementSibling.innerHTML = highlight(textarea.value);
}

function showEdge(p, edge, sourceKind) {
  p.sel = { kind: "edge", id: edge.id };
  p.root.setAttribute("aria-label", "Selected step");
  const dis = p.opts.canWrite ? "" : " disabled";
  const outcomes = [...(sourceKind ? sourceKind.outcomes : ["success", "error"]), "done"];
  let body;
  if (edge.branch >= 0) {
    body = edge.isDefault
      ? `<p>Default branch of the choice group of <span class="mono">${esc(edge.from)}</span>.</p>`
      : `<div class="field" data-field="when"><label for="f-when">when</label><div class="cel"><pre aria-hidden="true"></pre><textarea id="f-when" data-edge="when" rows="2" class="mono" spellcheck="false"${dis}>${esc(edge.when)}</textarea></div><p class="field-error server" hidden></p></div>`;
  } else {
    body = `<div class="field" data-field="on"><label for="f-on">on</label><select id="f-on" data-edge="on"${dis}>${outcomes.map((o) => `<option${o === edge.on ? " selected" : ""}>${o}</option>`).join("")}</select><p class="field-error server" hidden></p></div>`;
  }
  p.root.innerHTML = `<h2>Edge</h2><p class="mono">${esc(edge.from)} → ${esc(edge.to)}</p><ul class="panel-problems" id="panel-problems"></ul>${body}` +
    (p.opts.canWrite ? `<button type="button" class="danger" id="delete-edge">Delete edge</button>` : "");
  p.root.querySelectorAll(".cel textarea").forEach(paintCEL);
}

// showProblems puts each problem of the selection on its field, or in
// the panel's list when no field matches. list: [{rest, message}] where
// rest is the path inside the step or edge ("with.expr", "on").
function showProblems(p, list) {
  const fields = [...p.root.querySelectorAll(".field[data-field]")];
  for (const f of fields) {
    const e = f.querySelector(".field-error.server");
    e.hidden = true;
    e.textContent = "";
    f.classList.remove("invalid");
  }
  const left = [];
  for (const pr of list) {
    const f = fields.filter((x) => pathMatches(pr.rest, x.dataset.field))
      .sort((a, b) => b.dataset.field.length - a.dataset.field.length)[0];
    if (!f) {
      left.push(pr);
      continue;
    }
    const e = f.querySelector(".field-error.server");
    if (e.textContent) e.append("; ");
    e.append(pr.message);
    const caret = celCaret(f, pr.message);
    if (caret) e.append(caret);
    e.hidden = false;
    f.classList.add("invalid");
  }
  const ul = p.root.querySelector("#panel-problems");
  if (ul) ul.innerHTML = left.map((x) => `<li class="error">${x.rest ? `<span class="mono">${esc(x.rest)}</span> ` : ""}${esc(x.message)}</li>`).join("");
}

function pathMatches(rest, field) {
  return rest === field || rest.startsWith(field + ".") || rest.startsWith(field + "[");
}

// celCaret shows, under a CEL field, the line of the expression a problem
// is on with the column marked, when the message says where ("… (line 1,
// column 10)").
function celCaret(field, message) {
  const m = /\(line (\d+), column (\d+)\)/.exec(message);
  const src = field.querySelector(".cel textarea, textarea[data-edge=when]");
  if (!m || !src) return null;
  const line = src.value.split("\n")[Number(m[1]) - 1];
  if (line === undefined) return null;
  const col = Math.min(Number(m[2]) - 1, line.length);
  const pre = document.createElement("pre");
  pre.className = "cel-caret";
  pre.setAttribute("aria-label", `line ${m[1]}, column ${m[2]}`);
  const at = document.createElement("mark");
  at.textContent = line.slice(col, col + 1) || " ";
  pre.append(line.slice(0, col), at, line.slice(col + 1), "\n" + " ".repeat(col) + "^");
  return pre;
}
