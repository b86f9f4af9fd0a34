// The side panel's sub-forms and pickers: a human_loop's case fields and
// an http step's headers as rows (and, from subforms.js, event_set
// members, status codes, an http body and a step's concurrency), and a
// small keyboard-driven combobox
// that offers what the server knows (handlers, members and roles,
// definitions and versions) or what the graph says (ancestor scatters).
// Free text stays allowed in every field a picker feeds.

import { escapeHTML as esc } from "./cel.js";
import { edgesOf, stepByRef } from "./doc.js";
import { rowButtons, SUB_KINDS } from "./subforms.js";

// CASE_TYPES are the case field types the inbox's form renders as
// inputs (views/inbox_data.go): enum is a string with options.
const CASE_TYPES = ["string", "number", "integer", "boolean", "enum"];

// ---- rows: case fields and headers ----

// schemaRows is a case-fields schema ({type: object, properties,
// required}) as rows, or null when the value is no such object.
function schemaRows(v) {
  if (v === undefined) return { rows: [], extra: {}, order: [], required: [] };
  if (!v || typeof v !== "object" || Array.isArray(v)) return null;
  const { type, properties, required, ...extra } = v;
  if (type !== undefined && type !== "object") return null;
  if (properties !== undefined && (!properties || typeof properties !== "object" || Array.isArray(properties))) return null;
  const req = new Set(Array.isArray(required) ? required : []);
  const rows = Object.entries(properties || {}).map(([name, p]) => {
    const pm = p && typeof p === "object" && !Array.isArray(p) ? p : {};
    const { type: t, title, enum: options, ...rest } = pm;
    const isEnum = Array.isArray(options) && options.length > 0;
    return { name, title: typeof title === "string" ? title : "", type: isEnum ? "enum" : typeof t === "string" ? t : "string",
      base: isEnum && typeof t === "string" ? t : "", required: req.has(name), options: isEnum ? options.map(String).join(", ") : "", rest,
      order: Object.keys(pm) };
  });
  return { rows, extra, order: Object.keys(v), required: Array.isArray(required) ? required : [] };
}

function schemaRow(r, id, i, dis) {
  const types = CASE_TYPES.includes(r.type) ? CASE_TYPES : [...CASE_TYPES, r.type];
  const n = `${id}-${i}`;
  return `<li class="row case-row" data-rest="${esc(JSON.stringify(r.rest || {}))}" data-base="${esc(r.base || "")}" data-order="${esc(JSON.stringify(r.order || []))}">` +
    `<input data-col="name" class="mono" aria-label="Field name" placeholder="name" value="${esc(r.name)}"${dis}>` +
    `<input data-col="title" aria-label="Field label" placeholder="label" value="${esc(r.title)}"${dis}>` +
    `<select data-col="type" aria-label="Field type"${dis}>${types.map((t) => `<option${t === r.type ? " selected" : ""}>${esc(t)}</option>`).join("")}</select>` +
    `<label class="inline small" for="${n}-req"><input type="checkbox" id="${n}-req" data-col="required"${r.required ? " checked" : ""}${dis}> required</label>` +
    `<input data-col="options" class="mono" aria-label="Options, separated by commas" placeholder="options: a, b, c" value="${esc(r.options)}"${r.type === "enum" ? "" : " hidden"}${dis}>` +
    rowButtons("field", dis) + `</li>`;
}

function headerRow(r, dis) {
  return `<li class="row header-row"><input data-col="key" class="mono" aria-label="Header name" placeholder="Name" value="${esc(r.key)}"${dis}>` +
    `<input data-col="value" class="mono" aria-label="Header value" placeholder="value" value="${esc(r.value)}"${dis}>` + rowButtons("header", dis) + `</li>`;
}

function headerRows(v) {
  if (v === undefined) return [];
  if (!v || typeof v !== "object" || Array.isArray(v) || Object.values(v).some((x) => typeof x !== "string")) return null;
  return Object.entries(v).map(([key, value]) => ({ key, value }));
}

// rowsForm is the sub-form of a schema, headers, events, statuses, body
// or flow field, or null when its value does not fit one (then the field
// shows its JSON).
export function rowsForm(kind, id, path, v, dis) {
  if (SUB_KINDS[kind]) return SUB_KINDS[kind].form(id, path, v, dis);
  if (kind === "schema") {
    const s = schemaRows(v);
    if (!s) return null;
    return `<div class="subform rows-form" data-sub="schema" data-path="${esc(path)}" data-extra="${esc(JSON.stringify(s.extra))}"` +
      ` data-order="${esc(JSON.stringify(s.order))}" data-required="${esc(JSON.stringify(s.required))}" id="${id}">` +
      `<ol class="rows" aria-label="${path === "input_schema" ? "Input fields" : "Case fields"}">${s.rows.map((r, i) => schemaRow(r, id, i, dis)).join("")}</ol>` +
      (dis ? "" : `<button type="button" class="small" data-row="add" id="${id}-add">Add a field</button>`) + `</div>`;
  }
  const rows = headerRows(v);
  if (!rows) return null;
  return `<div class="subform rows-form" data-sub="headers" data-path="${esc(path)}" id="${id}">` +
    `<ol class="rows" aria-label="Headers">${rows.map((r) => headerRow(r, dis)).join("")}</ol>` +
    (dis ? "" : `<button type="button" class="small" data-row="add" id="${id}-add">Add a header</button>`) + `</div>`;
}

// readRows is the value a rows sub-form says (undefined when empty).
export function readRows(box) {
  const sub = SUB_KINDS[box.dataset.sub];
  if (sub) return sub.read(box, box.querySelector(".rows") ? [...box.querySelector(".rows").children] : []);
  const rows = [...box.querySelector(".rows").children];
  if (box.dataset.sub === "headers") {
    const out = {};
    for (const r of rows) {
      const k = r.querySelector("[data-col=key]").value.trim();
      if (k) out[k] = r.querySelector("[data-col=value]").value;
    }
    return Object.keys(out).length ? out : undefined;
  }
  const props = {};
  const required = [];
  for (const r of rows) {
    const col = (c) => r.querySelector(`[data-col=${c}]`);
    col("options").hidden = col("type").value !== "enum";
    const name = col("name").value.trim();
    if (!name) continue;
    const p = { ...JSON.parse(r.dataset.rest || "{}") };
    const t = col("type").value;
    p.type = t === "enum" ? r.dataset.base || "string" : t;
    const title = col("title").value.trim();
    if (title) p.title = title;
    if (t === "enum") {
      const opts = col("options").value.split(",").map((s) => s.trim()).filter(Boolean);
      if (!opts.length) throw new Error(`${name}: an enum needs options, separated by commas`);
      p.enum = p.type === "number" || p.type === "integer" ? opts.map(Number) : opts;
    }
    props[name] = ordered(JSON.parse(r.dataset.order || "[]"), p);
    if (col("required").checked) required.push(name);
  }
  const extra = JSON.parse(box.dataset.extra || "{}");
  const order = box.dataset.order ? JSON.parse(box.dataset.order) : [];
  if (!rows.length && !Object.keys(extra).length && !order.length) return undefined;
  // A schema read back unedited is the schema drawn: its keys and its
  // required names keep their order, and one written without a type
  // gains none.
  const out = { ...extra };
  if (!order.length || order.includes("type")) out.type = "object";
  if (!order.length || order.includes("properties") || Object.keys(props).length) out.properties = props;
  const was = JSON.parse(box.dataset.required || "[]");
  const rank = (n) => (was.includes(n) ? was.indexOf(n) : was.length);
  required.sort((a, b) => rank(a) - rank(b));
  if (required.length) out.required = required;
  return ordered(order, out);
}

// ordered is obj with the keys of order first, in that order, then its
// others.
function ordered(order, obj) {
  const out = {};
  for (const k of order) if (k in obj) out[k] = obj[k];
  for (const k of Object.keys(obj)) if (!(k in out)) out[k] = obj[k];
  return out;
}

// rowAction adds, moves or removes a row; true when the value changed.
export function rowAction(button) {
  const box = button.closest("[data-sub]");
  const list = box.querySelector(".rows");
  const row = button.closest(".row");
  switch (button.dataset.row) {
    case "add": {
      const id = box.id;
      const sub = SUB_KINDS[box.dataset.sub];
      list.insertAdjacentHTML("beforeend", sub ? sub.blank(button.dataset.blank, box) : box.dataset.sub === "schema"
        ? schemaRow({ name: "", title: "", type: "string", required: false, options: "" }, id, list.children.length + Date.now() % 100000, "")
        : headerRow({ key: "", value: "" }, ""));
      list.lastElementChild.querySelector("input, textarea").focus();
      return false; // an empty row changes nothing yet
    }
    case "up":
      if (row.previousElementSibling) row.previousElementSibling.before(row);
      break;
    case "down":
      if (row.nextElementSibling) row.nextElementSibling.after(row);
      break;
    case "remove": {
      const next = row.nextElementSibling || row.previousElementSibling;
      row.remove();
      (next ? next.querySelector("input, textarea") : box.querySelector("[data-row=add]"))?.focus();
      break;
    }
  }
  button.isConnected && button.focus();
  return true;
}

// ---- pickers ----

// ancestorScatters are the scatters upstream of ref in the graph, nearest
// first.
export function ancestorScatters(doc, ref) {
  const into = new Map();
  for (const e of edgesOf(doc)) {
    if (!into.has(e.to)) into.set(e.to, []);
    into.get(e.to).push(e.from);
  }
  const seen = new Set([ref]);
  const out = [];
  let frontier = [ref];
  while (frontier.length) {
    const next = [];
    for (const r of frontier) {
      for (const from of into.get(r) || []) {
        if (seen.has(from)) continue;
        seen.add(from);
        next.push(from);
        const s = stepByRef(doc, from);
        if (s && s.type === "scatter") out.push(from);
      }
    }
    frontier = next;
  }
  return out;
}

// options is what a picker offers for a step: [{value, note}].
export function pickerOptions(picker, step, doc, hints) {
  const h = hints || {};
  switch (picker) {
    case "handler":
      return (h.handlers || ["builtin.echo", "builtin.fail", "builtin.noop", "builtin.sleep"])
        .map((x) => ({ value: x, note: x.startsWith("builtin.") ? "built in" : "seen" }));
    case "people":
      return [...(h.members || []).map((m) => ({ value: m.email, note: m.name ? `${m.name} · ${m.role}` : m.role })),
        ...(h.roles || []).map((r) => ({ value: r, note: "every member with the role" }))];
    case "scatter":
      return ancestorScatters(doc, step.ref).map((r) => ({ value: r, note: "scatter upstream" }));
    case "workflow":
      return (h.definitions || []).map((d) => ({ value: d.key, note: d.versions.length ? `${d.name || ""} v${d.versions[0]}`.trim() : "not published" }));
    case "version": {
      const wf = step.with && step.with.workflow;
      const d = (h.definitions || []).find((x) => x.key === wf);
      return d ? d.versions.map((n, i) => ({ value: String(n), note: i === 0 ? "newest published" : "published" })) : [];
    }
  }
  return [];
}

// comboAttrs makes an input a combobox with a listbox under it.
export function comboAttrs(id, picker) {
  return `role="combobox" aria-autocomplete="list" aria-expanded="false" aria-controls="${id}-list" autocomplete="off" data-picker="${picker}"`;
}

export function comboList(id, label) {
  return `<ul class="combo-list" id="${id}-list" role="listbox" aria-label="${esc(label)}" hidden></ul>`;
}

// createCombos drives every combobox in root: options(input) lists what
// the input's picker offers; pick(input, value) takes one.
export function createCombos(root, options, pick) {
  const st = { input: null, found: [], active: -1 };
  const list = () => st.input && document.getElementById(st.input.getAttribute("aria-controls"));

  function close() {
    const l = list();
    if (l) l.hidden = true;
    if (st.input) {
      st.input.setAttribute("aria-expanded", "false");
      st.input.removeAttribute("aria-activedescendant");
    }
    st.found = [];
    st.active = -1;
  }

  function show(input) {
    if (st.input !== input) {
      close();
      st.input = input;
    }
    const all = options(input);
    const q = input.value.trim().toLowerCase();
    const exact = all.some((o) => o.value.toLowerCase() === q);
    st.found = (q && !exact ? all.filter((o) => (o.value + " " + o.note).toLowerCase().includes(q)) : all).slice(0, 50);
    st.active = st.found.length ? Math.max(0, Math.min(st.active, st.found.length - 1)) : -1;
    const l = list();
    const id = input.id;
    l.innerHTML = st.found.map((o, i) => `<li role="option" id="${id}-opt-${i}" data-value="${esc(o.value)}" aria-selected="${i === st.active}">` +
      `<span class="mono">${esc(o.value)}</span>${o.note ? ` <span class="sub">${esc(o.note)}</span>` : ""}</li>`).join("");
    const open = st.found.length > 0 && document.activeElement === input;
    l.hidden = !open;
    input.setAttribute("aria-expanded", String(open));
    if (open && st.active >= 0) input.setAttribute("aria-activedescendant", `${id}-opt-${st.active}`);
    else input.removeAttribute("aria-activedescendant");
  }

  function take(value) {
    const input = st.input;
    close();
    if (input) pick(input, value);
  }

  const isCombo = (el) => el && el.matches && el.matches("input[data-picker]");
  root.addEventListener("focusin", (ev) => { if (isCombo(ev.target)) { st.active = -1; show(ev.target); } });
  root.addEventListener("focusout", (ev) => { if (isCombo(ev.target) && ev.target === st.input) close(); });
  root.addEventListener("input", (ev) => { if (isCombo(ev.target)) { st.active = 0; show(ev.target); } });
  root.addEventListener("keydown", (ev) => {
    const input = ev.target;
    if (!isCombo(input)) return;
    const l = document.getElementById(input.getAttribute("aria-controls"));
    const open = l && !l.hidden;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (!open) { st.active = 0; return show(input); }
      const n = st.found.length;
      if (!n) return;
      st.active = (st.active + (ev.key === "ArrowDown" ? 1 : n - 1)) % n;
      show(input);
      document.getElementById(`${input.id}-opt-${st.active}`)?.scrollIntoView({ block: "nearest" });
    } else if (ev.key === "Enter") {
      if (open && st.active >= 0 && st.found[st.active]) {
        ev.preventDefault();
        take(st.found[st.active].value);
      } else if (input.dataset.addTo) {
        ev.preventDefault();
        if (input.value.trim()) pick(input, input.value.trim());
      }
    } else if (ev.key === "Escape" && open) {
      ev.preventDefault();
      close();
    }
  });
  root.addEventListener("pointerdown", (ev) => { if (ev.target.closest(".combo-list")) ev.preventDefault(); });
  root.addEventListener("click", (ev) => {
    const li = ev.target.closest(".combo-list li[data-value]");
    if (li) take(li.dataset.value);
  });
  return { refresh: () => st.input && document.activeElement === st.input && show(st.input) };
}
