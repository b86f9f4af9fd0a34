// The side panel: fields made for the selected step's type (required
// fields marked, enums as selects, durations checked, CEL with
// highlighting) or the selected edge's outcome, with the server's
// problems shown on the field they belong to.

import { highlight, escapeHTML as esc } from "./cel.js";
import { getPath } from "./doc.js";

const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;
const ISO_DURATION = /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

export function validDuration(s) {
  return s === "" || GO_DURATION.test(s) || ISO_DURATION.test(s);
}

export function createPanel(root, opts) {
  const p = { root, opts, sel: null };
  root.addEventListener("input", (ev) => onInput(p, ev));
  root.addEventListener("change", (ev) => onInput(p, ev, true));
  root.addEventListener("click", (ev) => {
    if (ev.target.closest("#delete-step, #delete-edge")) opts.onDelete(p.sel);
  });
  return {
    showStep: (step, index) => showStep(p, step, index),
    showEdge: (edge, sourceKind) => showEdge(p, edge, sourceKind),
    clear: () => clear(p),
    problems: (list) => showProblems(p, list),
    busy: () => root.contains(document.activeElement) && document.activeElement !== root,
  };
}

function clear(p) {
  p.sel = null;
  p.root.innerHTML = `<p class="muted">Select a step to edit its settings.</p>`;
}

function showStep(p, step, index) {
  const kind = p.opts.kinds.get(step.type);
  p.sel = { kind: "step", id: step.ref, index };
  const dis = p.opts.canWrite ? "" : " disabled";
  const fields = kind ? kind.fields.map((f) => ({ ...f, path: "with." + f.name })) : [];
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

function field(p, step, f, dis) {
  const id = "f-" + f.path.replace(/[^a-z0-9_]/gi, "-");
  const v = getPath(step, f.path);
  const mark = f.required ? ` <abbr class="req" title="required">*</abbr>` : f.one_of ? ` <span class="muted" title="exactly one of the ${esc(f.one_of)} fields">(one of)</span>` : "";
  const label = `<label for="${id}">${esc(f.name)}${mark}</label>`;
  const common = `id="${id}" data-path="${esc(f.path)}" data-kind="${f.kind}"${dis}${f.required ? " required aria-required=\"true\"" : ""}`;
  let input;
  switch (f.kind) {
    case "enum":
      input = `<select ${common}><option value="">(default: ${esc(f.default)})</option>${f.options.map((o) => `<option${o === v ? " selected" : ""}>${esc(o)}</option>`).join("")}</select>`;
      break;
    case "expr":
      input = `<div class="cel"><pre aria-hidden="true"></pre><textarea ${common} rows="${f.name === "expr" ? 3 : 1}" spellcheck="false" class="mono">${esc(v ?? "")}</textarea></div>`;
      break;
    case "list":
      input = `<textarea ${common} rows="2" class="mono" placeholder="one per line">${esc(Array.isArray(v) ? v.join("\n") : v ?? "")}</textarea>`;
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
    default:
      return text;
  }
}

function onInput(p, ev, committed) {
  const el = ev.target;
  if (el.closest(".cel")) paintCEL(el);
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
  p.opts.onField(p.sel, el.dataset.path, value);
}

function paintCEL(textarea) {
  textarea.previousElementSibling.innerHTML = highlight(textarea.value);
}

function showEdge(p, edge, sourceKind) {
  p.sel = { kind: "edge", id: edge.id };
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
    const f = fields.find((x) => pathMatches(pr.rest, x.dataset.field));
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
