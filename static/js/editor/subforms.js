// Sub-forms of list and value settings, beside forms.js's case fields
// and headers: an event_set's members, an http step's expected status
// codes and its JSON body (key and value rows, each value typed), and a
// task's or http step's concurrency ({key_expr, limit}). Each kind has
// form (the value drawn, or null when the value does not fit and the
// field shows its JSON), read (the value the inputs say, undefined when
// empty; throws a message for the field) and blank (a new row).
//
// A value read back from inputs nobody changed is the value drawn: a
// member's or a concurrency's keys keep their order and the keys the
// form has no input for, and a single status code stays a number.

import { escapeHTML as esc } from "./cel.js";

// rowButtons are a row's move and remove buttons.
export function rowButtons(what, dis) {
  if (dis) return "";
  return `<span class="row-tools"><button type="button" class="icon-button" data-row="up" aria-label="Move the ${what} up" title="Move up">↑</button>` +
    `<button type="button" class="icon-button" data-row="down" aria-label="Move the ${what} down" title="Move down">↓</button>` +
    `<button type="button" class="icon-button" data-row="remove" aria-label="Remove the ${what}" title="Remove">✕</button></span>`;
}

const isObject = (v) => !!v && typeof v === "object" && !Array.isArray(v);

// rowsBox is a sub-form of rows with its add button.
function rowsBox(sub, id, path, label, rows, add, dis, attrs = "") {
  return `<div class="subform rows-form" data-sub="${sub}" data-path="${esc(path)}" id="${id}"${attrs}>` +
    `<ol class="rows" aria-label="${esc(label)}">${rows.join("")}</ol>` +
    (dis ? "" : `<button type="button" class="small" data-row="add" id="${id}-add">${esc(add)}</button>`) + `</div>`;
}

const col = (r, c) => r.querySelector(`[data-col=${c}]`);

// ---- event_set members: {name, match_expr?, key?} ----

const EVENT_KEYS = ["name", "match_expr", "key"];

function eventRow(e, dis) {
  return `<li class="row event-row" data-orig="${esc(JSON.stringify(e))}">` +
    `<input data-col="name" class="mono" aria-label="Event name" placeholder="name" value="${esc(e.name ?? "")}"${dis}>` +
    `<input data-col="key" class="mono" aria-label="Member key (default: the name)" placeholder="key (default: name)" value="${esc(e.key ?? "")}"${dis}>` +
    `<input data-col="match_expr" class="mono" aria-label="Match expression" placeholder="match_expr: event.order == input.order" value="${esc(e.match_expr ?? "")}" spellcheck="false"${dis}>` +
    rowButtons("event", dis) + `</li>`;
}

function eventsForm(id, path, v, dis) {
  if (v !== undefined && !Array.isArray(v)) return null;
  const list = v || [];
  if (!list.every((e) => isObject(e) && EVENT_KEYS.every((k) => e[k] === undefined || typeof e[k] === "string"))) return null;
  return rowsBox("events", id, path, "Events", list.map((e) => eventRow(e, dis)), "Add an event", dis);
}

// readEvents keeps each member as it was, its inputs written over it.
function readEvents(box, rows) {
  const out = [];
  for (const r of rows) {
    const name = col(r, "name").value.trim();
    if (!name) continue;
    const e = JSON.parse(r.dataset.orig || "{}");
    e.name = name;
    const match = col(r, "match_expr").value;
    if (match.trim()) e.match_expr = match;
    else delete e.match_expr;
    const key = col(r, "key").value.trim();
    if (key) e.key = key;
    else delete e.key;
    out.push(e);
  }
  return out.length ? out : undefined;
}

// ---- expect_status: a code or a list of codes ----

function statusRow(code, dis) {
  return `<li class="row status-row"><input data-col="status" type="number" min="100" max="599" step="1" inputmode="numeric" class="mono"` +
    ` aria-label="Status code" placeholder="200" value="${esc(code ?? "")}"${dis}>` + rowButtons("status code", dis) + `</li>`;
}

function statusesForm(id, path, v, dis) {
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  if (!list.every(Number.isInteger)) return null;
  const scalar = v !== undefined && !Array.isArray(v);
  return rowsBox("statuses", id, path, "Status codes", list.map((c) => statusRow(c, dis)), "Add a status code", dis,
    ` data-scalar="${scalar}"`);
}

function readStatuses(box, rows) {
  const codes = [];
  for (const r of rows) {
    const input = col(r, "status");
    const t = input.value.trim();
    if (!t && input.validity.badInput) throw new Error("a status code is a whole number from 100 to 599");
    if (!t) continue;
    if (!/^\d+$/.test(t)) throw new Error("a status code is a whole number from 100 to 599");
    codes.push(Number(t));
  }
  if (!codes.length) return undefined;
  return box.dataset.scalar === "true" && codes.length === 1 ? codes[0] : codes;
}

// ---- body: a JSON object as key and typed value rows ----

// BODY_TYPES are what a body value may be; JSON is a list or an object,
// written as JSON.
const BODY_TYPES = ["text", "number", "boolean", "null", "JSON"];

function bodyType(x) {
  if (x === null) return "null";
  if (typeof x === "string") return "text";
  if (typeof x === "number" || typeof x === "boolean") return typeof x;
  return "JSON";
}

function bodyText(x) {
  if (typeof x === "string") return x;
  if (x === null || x === undefined) return "";
  return typeof x === "object" ? JSON.stringify(x) : String(x);
}

function bodyValue(type, text, dis) {
  const attrs = `data-col="value" data-type="${type}" aria-label="Value (${type})"${dis}`;
  switch (type) {
    case "boolean":
      return `<select ${attrs}>${["true", "false"].map((o) => `<option${o === text ? " selected" : ""}>${o}</option>`).join("")}</select>`;
    case "null":
      return `<input ${attrs} class="mono" value="null" readonly>`;
    case "number":
      return `<input ${attrs} type="number" step="any" class="mono" value="${esc(text)}">`;
    case "JSON":
      return `<input ${attrs} class="mono" spellcheck="false" placeholder="[1, 2] or {&quot;a&quot;: 1}" value="${esc(text)}">`;
  }
  return `<input ${attrs} value="${esc(text)}">`;
}

function bodyRow(r, dis) {
  return `<li class="row body-row"><input data-col="key" class="mono" aria-label="Body key" placeholder="key" value="${esc(r.key)}"${dis}>` +
    `<select data-col="type" aria-label="Value type"${dis}>${BODY_TYPES.map((t) => `<option${t === r.type ? " selected" : ""}>${t}</option>`).join("")}</select>` +
    bodyValue(r.type, r.text, dis) + rowButtons("key", dis) + `</li>`;
}

function bodyForm(id, path, v, dis) {
  if (v !== undefined && !isObject(v)) return null;
  const rows = Object.entries(v || {}).map(([key, x]) => ({ key, type: bodyType(x), text: bodyText(x) }));
  return rowsBox("body", id, path, "Body keys", rows.map((r) => bodyRow(r, dis)), "Add a key", dis);
}

// retype redraws a row's value input when its type was changed, keeping
// the text where the new type can hold it.
function retype(r) {
  const type = col(r, "type").value;
  const old = col(r, "value");
  if (old.dataset.type === type) return;
  let text = old.dataset.type === "null" ? "" : old.value;
  if (type === "number" && !Number.isFinite(Number(text))) text = "";
  if (type === "boolean") text = text === "false" ? "false" : "true";
  old.outerHTML = bodyValue(type, text, "");
}

function bodyEntry(key, input) {
  const text = input.value;
  switch (input.dataset.type) {
    case "number":
      if (text.trim() === "" || !Number.isFinite(Number(text))) throw new Error(`${key}: must be a number`);
      return Number(text);
    case "boolean":
      return text === "true";
    case "null":
      return null;
    case "JSON":
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`${key}: must be JSON, a list [ … ] or an object { … }`);
      }
  }
  return text;
}

function readBody(box, rows) {
  const out = {};
  for (const r of rows) {
    retype(r);
    const key = col(r, "key").value.trim();
    if (key) out[key] = bodyEntry(key, col(r, "value"));
  }
  return Object.keys(out).length ? out : undefined;
}

// ---- a step's concurrency: {key_expr, limit} ----

function flowForm(id, path, v, dis) {
  if (v !== undefined && !isObject(v)) return null;
  const { key_expr: key = "", limit } = v || {};
  if (typeof key !== "string" || (limit !== undefined && typeof limit !== "string" && !Number.isInteger(limit))) return null;
  const expr = typeof limit === "string";
  return `<div class="subform flow-form" data-sub="flow" data-path="${esc(path)}" data-orig="${esc(JSON.stringify(v || {}))}" id="${id}">` +
    `<label for="${id}-key_expr">key_expr</label><div class="cel"><pre aria-hidden="true"></pre>` +
    `<textarea id="${id}-key_expr" data-col="key_expr" rows="1" class="mono" spellcheck="false"${dis}>${esc(key)}</textarea></div>` +
    `<label for="${id}-limit">limit</label><div class="flow-limit">` +
    `<select id="${id}-limit-kind" data-col="limit_kind" aria-label="limit: a number or an expression"${dis}>` +
    `<option value="number"${expr ? "" : " selected"}>a number</option><option value="expr"${expr ? " selected" : ""}>an expression</option></select>` +
    `<input id="${id}-limit" data-col="limit" class="mono"${expr ? ' spellcheck="false"' : ' type="number" min="1" step="1"'} value="${esc(limit ?? "")}"${dis}>` +
    `</div></div>`;
}

function readFlow(box) {
  const out = JSON.parse(box.dataset.orig || "{}");
  const key = col(box, "key_expr").value;
  if (key.trim()) out.key_expr = key;
  else delete out.key_expr;
  const input = col(box, "limit");
  const expr = col(box, "limit_kind").value === "expr";
  if (input.type !== (expr ? "text" : "number")) input.type = expr ? "text" : "number";
  const text = input.value.trim();
  if (!text) delete out.limit;
  else if (expr) out.limit = input.value;
  else if (/^\d+$/.test(text)) out.limit = Number(text);
  else throw new Error("limit must be a whole number from 1");
  return Object.keys(out).length ? out : undefined;
}

// SUB_KINDS are the kinds this file draws and reads.
export const SUB_KINDS = {
  events: { form: eventsForm, read: readEvents, blank: () => eventRow({}, "") },
  statuses: { form: statusesForm, read: readStatuses, blank: () => statusRow(undefined, "") },
  body: { form: bodyForm, read: readBody, blank: () => bodyRow({ key: "", type: "text", text: "" }, "") },
  flow: { form: flowForm, read: readFlow },
};
