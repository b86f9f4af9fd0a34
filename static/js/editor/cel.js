// A small CEL highlighter: strings, numbers, keywords, the environment's
// variables and operators, as HTML.

const TOKEN = /("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)|(\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?u?\b)|(\b[A-Za-z_][A-Za-z0-9_]*\b)|(&&|\|\||==|!=|<=|>=|[-+*/%!<>?:])/g;
const KEYWORDS = new Set(["true", "false", "null", "in"]);
const VARIABLES = new Set(["input", "steps", "run", "now", "item", "index", "key", "event"]);

export function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function highlight(src) {
  let html = "";
  let last = 0;
  for (const m of src.matchAll(TOKEN)) {
    html += escapeHTML(src.slice(last, m.index));
    html += `<span class="${tokenClass(m)}">${escapeHTML(m[0])}</span>`;
    last = m.index + m[0].length;
  }
  // a trailing newline keeps the overlay as tall as the textarea
  return html + escapeHTML(src.slice(last)) + "\n";
}

function tokenClass(m) {
  if (m[1]) return "tok-str";
  if (m[2]) return "tok-num";
  if (m[3]) return KEYWORDS.has(m[3]) ? "tok-kw" : VARIABLES.has(m[3]) ? "tok-var" : "tok-id";
  return "tok-op";
}
