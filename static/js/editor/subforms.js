// Sub-forms of list and value settings, beside forms.js's case fields
// and headers: an event_set's members, an http step's expected status
// codes and its JSON body (key and value rows, each value typed), a
// task's or http step's concurrency ({key_expr, limit}), an http step's
// auth and a task's secrets; and the workflow settings' flow control (a
// definition's concurrency rules, its debounce, throttle and rate limit)
// and triggers. Each kind has
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

// ---- shared pieces of the settings below ----

const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;
const ISO_DURATION = /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

export function validDuration(s) {
  return s === "" || GO_DURATION.test(s) || ISO_DURATION.test(s);
}

// celInput is an expression input of a sub-form: monospace, highlighted
// as the panel's expression fields are.
function celInput(attrs, v) {
  return `<div class="cel"><pre aria-hidden="true"></pre><textarea ${attrs} rows="1" class="mono" spellcheck="false">${esc(v ?? "")}</textarea></div>`;
}

// limitInputs are a limit's kind (a number or an expression) and its
// input, as a step's concurrency has them.
function limitInputs(ids, limit, dis, label = "limit") {
  const expr = typeof limit === "string";
  return `<div class="flow-limit"><select${ids ? ` id="${ids}-kind"` : ""} data-col="limit_kind" aria-label="${esc(label)}: a number or an expression"${dis}>` +
    `<option value="number"${expr ? "" : " selected"}>a number</option><option value="expr"${expr ? " selected" : ""}>an expression</option></select>` +
    `<input${ids ? ` id="${ids}"` : ""} data-col="limit" class="mono"${ids ? "" : ` aria-label="${esc(label)}"`}${expr ? ' spellcheck="false"' : ' type="number" min="1" step="1"'} value="${esc(limit ?? "")}"${dis}></div>`;
}

// readLimit writes a limit's inputs over out.limit.
function readLimit(r, out) {
  const input = col(r, "limit");
  const expr = col(r, "limit_kind").value === "expr";
  if (input.type !== (expr ? "text" : "number")) input.type = expr ? "text" : "number";
  const text = input.value.trim();
  if (!text) delete out.limit;
  else if (expr) out.limit = input.value;
  else if (/^\d+$/.test(text)) out.limit = Number(text);
  else throw new Error("limit must be a whole number from 1");
}

// put sets out[key] to a text (kept as typed, or trimmed) or, empty,
// deletes it: a key that stays keeps its place.
function put(out, key, text, trim = true) {
  const v = trim ? text.trim() : text;
  if (v.trim()) out[key] = v;
  else delete out[key];
}

const isInt = (x) => Number.isInteger(x);
const isStr = (x) => typeof x === "string";
const fits = (o, keys, test) => keys.every((k) => o[k] === undefined || test[k](o[k]));

// ---- a definition's concurrency: [{key_expr, limit, strategy}] ----

// STRATEGIES are a rule's (app/definition's), the first the default.
const STRATEGIES = ["queue", "cancel_in_progress", "cancel_newest"];

function ruleRow(r, dis) {
  const s = r.strategy ?? "";
  const options = STRATEGIES.includes(s) || !s ? STRATEGIES : [...STRATEGIES, s];
  return `<li class="row rule-row" data-orig="${esc(JSON.stringify(r))}">` +
    celInput(`data-col="key_expr" aria-label="Rule key expression (default: one key for the whole definition)" placeholder="key_expr: input.customer"${dis}`, r.key_expr) +
    limitInputs("", r.limit, dis, "Rule limit") +
    `<select data-col="strategy" aria-label="Rule strategy over the limit"${dis}><option value="">(default: queue)</option>` +
    options.map((o) => `<option${o === s ? " selected" : ""}>${esc(o)}</option>`).join("") + `</select>` +
    rowButtons("rule", dis) + `</li>`;
}

function rulesForm(id, path, v, dis) {
  if (v !== undefined && !Array.isArray(v)) return null;
  const list = v || [];
  const test = { key_expr: isStr, limit: (x) => isStr(x) || isInt(x), strategy: isStr };
  if (!list.every((r) => isObject(r) && fits(r, Object.keys(test), test))) return null;
  return rowsBox("rules", id, path, "Concurrency rules", list.map((r) => ruleRow(r, dis)), "Add a rule", dis);
}

function readRules(box, rows) {
  const out = [];
  for (const r of rows) {
    const rule = JSON.parse(r.dataset.orig || "{}");
    put(rule, "key_expr", col(r, "key_expr").value, false);
    readLimit(r, rule);
    put(rule, "strategy", col(r, "strategy").value);
    if (Object.keys(rule).length) out.push(rule);
  }
  return out.length ? out : undefined;
}

// ---- objects of typed settings: a debounce, a throttle, a rate limit ----

// OBJECT_SPECS are each object's settings: expressions, durations and
// whole numbers.
const OBJECT_SPECS = {
  debounce: [
    { name: "key_expr", kind: "expr", placeholder: "one key for the whole definition" },
    { name: "period", kind: "duration", required: true },
    { name: "max_wait", kind: "duration", placeholder: "none" },
  ],
  rate: [
    { name: "key_expr", kind: "expr", placeholder: "one key for the whole definition" },
    { name: "limit", kind: "int", required: true },
    { name: "period", kind: "duration", required: true },
  ],
};

const KIND_TEST = { expr: isStr, duration: isStr, int: isInt };

function objectForm(sub) {
  const spec = OBJECT_SPECS[sub];
  return (id, path, v, dis) => {
    if (v !== undefined && !isObject(v)) return null;
    const o = v || {};
    if (!spec.every((f) => o[f.name] === undefined || KIND_TEST[f.kind](o[f.name]))) return null;
    const inputs = spec.map((f) => {
      const fid = `${id}-${f.name}`;
      const mark = f.required ? ` <abbr class="req" title="required">*</abbr>` : "";
      const label = `<label for="${fid}">${esc(f.name)}${mark}</label>`;
      const attrs = `id="${fid}" data-col="${f.name}" data-type="${f.kind}"${f.placeholder ? ` placeholder="${esc(f.placeholder)}"` : ""}${dis}`;
      if (f.kind === "expr") return label + celInput(attrs, o[f.name]);
      if (f.kind === "int") return label + `<input ${attrs} type="number" min="1" step="1" class="mono" value="${esc(o[f.name] ?? "")}">`;
      return label + `<input ${attrs} class="mono"${f.placeholder ? "" : ' placeholder="90s, 1h30m or PT90S"'} value="${esc(o[f.name] ?? "")}">`;
    }).join("");
    return `<div class="subform flow-form object-form" data-sub="${sub}" data-path="${esc(path)}" data-orig="${esc(JSON.stringify(o))}" id="${id}">${inputs}</div>`;
  };
}

function readObject(box) {
  const out = JSON.parse(box.dataset.orig || "{}");
  for (const f of OBJECT_SPECS[box.dataset.sub]) {
    const input = col(box, f.name);
    const text = input.value.trim();
    if (f.kind === "expr") put(out, f.name, input.value, false);
    else if (!text) delete out[f.name];
    else if (f.kind === "int") {
      if (!/^\d+$/.test(text)) throw new Error(`${f.name} must be a whole number from 1`);
      out[f.name] = Number(text);
    } else {
      if (!validDuration(text)) throw new Error(`${f.name} must be a duration like 90s, 1h30m or PT90S`);
      out[f.name] = text;
    }
  }
  return Object.keys(out).length ? out : undefined;
}

// ---- triggers: [{event, filter_expr?, input_expr?} | {schedule: {…}}] ----

// SCHEDULE_KEYS are the schedule settings a row has inputs for; the
// others (input, jitter, start_at…) are kept as written, in the JSON.
const SCHEDULE_KEYS = [
  { name: "id", label: "Schedule id (default: KEY-N)", placeholder: "id" },
  { name: "cron", label: "Cron expression", placeholder: "cron: 0 9 * * 1-5" },
  { name: "interval", label: "Interval (a duration)", placeholder: "interval: 1h", duration: true },
  { name: "timezone", label: "Time zone of the cron", placeholder: "timezone: Europe/Paris" },
];

function triggerRow(t, dis) {
  const orig = `data-orig="${esc(JSON.stringify(t))}"`;
  if (t.schedule !== undefined) {
    const s = t.schedule || {};
    return `<li class="row trigger-row" data-trigger="schedule" ${orig}><span class="row-kind small muted">schedule</span>` +
      SCHEDULE_KEYS.map((k) => `<input data-col="${k.name}" class="mono" aria-label="${esc(k.label)}" placeholder="${esc(k.placeholder)}" value="${esc(s[k.name] ?? "")}"${dis}>`).join("") +
      rowButtons("schedule", dis) + `</li>`;
  }
  return `<li class="row trigger-row" data-trigger="event" ${orig}><span class="row-kind small muted">event</span>` +
    `<input data-col="event" class="mono" aria-label="Event name" placeholder="event: order.placed" value="${esc(t.event ?? "")}"${dis}>` +
    celInput(`data-col="filter_expr" aria-label="Filter expression (which events start a run)" placeholder="filter_expr: event.amount > 0"${dis}`, t.filter_expr) +
    celInput(`data-col="input_expr" aria-label="Input expression (default: the event's data)" placeholder="input_expr: event"${dis}`, t.input_expr) +
    rowButtons("trigger", dis) + `</li>`;
}

function triggersForm(id, path, v, dis) {
  if (v !== undefined && !Array.isArray(v)) return null;
  const list = v || [];
  const event = { event: isStr, filter_expr: isStr, input_expr: isStr };
  const ok = (t) => isObject(t) && (t.schedule !== undefined
    ? t.event === undefined && isObject(t.schedule) && SCHEDULE_KEYS.every((k) => t.schedule[k.name] === undefined || isStr(t.schedule[k.name]))
    : isStr(t.event) && fits(t, Object.keys(event), event));
  if (!list.every(ok)) return null;
  return `<div class="subform rows-form" data-sub="triggers" data-path="${esc(path)}" id="${id}">` +
    `<ol class="rows" aria-label="Triggers">${list.map((t) => triggerRow(t, dis)).join("")}</ol>` +
    (dis ? "" : `<button type="button" class="small" data-row="add" data-blank="event" id="${id}-add">Add an event trigger</button> ` +
      `<button type="button" class="small" data-row="add" data-blank="schedule" id="${id}-add-schedule">Add a schedule</button>`) + `</div>`;
}

function readTriggers(box, rows) {
  const out = [];
  for (const r of rows) {
    const t = JSON.parse(r.dataset.orig || "{}");
    if (r.dataset.trigger === "schedule") {
      const s = isObject(t.schedule) ? t.schedule : {};
      for (const k of SCHEDULE_KEYS) {
        const text = col(r, k.name).value.trim();
        if (k.duration && text && !validDuration(text)) throw new Error(`${k.name} must be a duration like 90s, 1h30m or PT90S`);
        put(s, k.name, text);
      }
      t.schedule = s;
      if (Object.keys(s).length || Object.keys(t).length > 1) out.push(t);
      continue;
    }
    put(t, "event", col(r, "event").value);
    put(t, "filter_expr", col(r, "filter_expr").value, false);
    put(t, "input_expr", col(r, "input_expr").value, false);
    if (Object.keys(t).length) out.push(t);
  }
  return out.length ? out : undefined;
}

// ---- a list of strings: a task's secrets ----

function stringsNoun(path) {
  return path.endsWith("secrets") ? "secret" : "value";
}

function stringRow(x, noun, dis) {
  return `<li class="row string-row"><input data-col="value" class="mono" aria-label="${noun === "secret" ? "Secret name" : "Value"}"` +
    ` placeholder="${noun === "secret" ? "API_TOKEN" : ""}" value="${esc(x ?? "")}"${dis}>` + rowButtons(noun, dis) + `</li>`;
}

function stringsForm(id, path, v, dis) {
  if (v !== undefined && !(Array.isArray(v) && v.every(isStr))) return null;
  const noun = stringsNoun(path);
  return rowsBox("strings", id, path, noun === "secret" ? "Secrets" : "Values", (v || []).map((x) => stringRow(x, noun, dis)),
    noun === "secret" ? "Add a secret" : "Add a value", dis);
}

function readStrings(box, rows) {
  const out = rows.map((r) => col(r, "value").value.trim()).filter(Boolean);
  return out.length ? out : undefined;
}

// ---- an http step's auth: {bearer: NAME} or {basic: {user, password: NAME}} ----

function authForm(id, path, v, dis) {
  if (v !== undefined && !isObject(v)) return null;
  const a = v || {};
  const keys = Object.keys(a);
  if (keys.some((k) => k !== "bearer" && k !== "basic") || keys.length > 1) return null;
  if (a.bearer !== undefined && !isStr(a.bearer)) return null;
  if (a.basic !== undefined && !(isObject(a.basic) && fits(a.basic, ["user", "password"], { user: isStr, password: isStr }))) return null;
  const scheme = keys[0] || "";
  const b = a.basic || {};
  return `<div class="subform flow-form auth-form" data-sub="auth" data-path="${esc(path)}" data-orig="${esc(JSON.stringify(a))}" id="${id}">` +
    `<label for="${id}-scheme">scheme</label><select id="${id}-scheme" data-col="scheme"${dis}>` +
    [["", "(none)"], ["bearer", "bearer: a token"], ["basic", "basic: a user and password"]]
      .map(([x, t]) => `<option value="${x}"${x === scheme ? " selected" : ""}>${t}</option>`).join("") + `</select>` +
    `<div class="auth-part" data-part="bearer"${scheme === "bearer" ? "" : " hidden"}><label for="${id}-bearer">bearer: the token's secret</label>` +
    `<input id="${id}-bearer" data-col="bearer" class="mono" placeholder="API_TOKEN" value="${esc(a.bearer ?? "")}"${dis}></div>` +
    `<div class="auth-part" data-part="basic"${scheme === "basic" ? "" : " hidden"}><label for="${id}-user">user</label>` +
    `<input id="${id}-user" data-col="user" class="mono" value="${esc(b.user ?? "")}"${dis}>` +
    `<label for="${id}-password">password: its secret</label>` +
    `<input id="${id}-password" data-col="password" class="mono" placeholder="API_PASSWORD" value="${esc(b.password ?? "")}"${dis}></div></div>`;
}

function readAuth(box) {
  const scheme = col(box, "scheme").value;
  for (const part of box.querySelectorAll(".auth-part")) part.hidden = part.dataset.part !== scheme;
  if (!scheme) return undefined;
  const orig = JSON.parse(box.dataset.orig || "{}");
  if (scheme === "bearer") return { bearer: col(box, "bearer").value.trim() };
  const basic = isObject(orig.basic) ? orig.basic : {};
  basic.user = col(box, "user").value;
  basic.password = col(box, "password").value.trim();
  return { basic };
}

// SUB_KINDS are the kinds this file draws and reads.
export const SUB_KINDS = {
  events: { form: eventsForm, read: readEvents, blank: () => eventRow({}, "") },
  statuses: { form: statusesForm, read: readStatuses, blank: () => statusRow(undefined, "") },
  body: { form: bodyForm, read: readBody, blank: () => bodyRow({ key: "", type: "text", text: "" }, "") },
  flow: { form: flowForm, read: readFlow },
  rules: { form: rulesForm, read: readRules, blank: () => ruleRow({}, "") },
  debounce: { form: objectForm("debounce"), read: readObject },
  rate: { form: objectForm("rate"), read: readObject },
  triggers: { form: triggersForm, read: readTriggers, blank: (kind) => triggerRow(kind === "schedule" ? { schedule: {} } : {}, "") },
  strings: { form: stringsForm, read: readStrings, blank: (kind, box) => stringRow("", stringsNoun(box.dataset.path), "") },
  auth: { form: authForm, read: readAuth },
};
