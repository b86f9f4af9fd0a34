// The document's text pane: a gutter of line numbers beside the textarea,
// scrolled with it, and the lines the compiler's problems are on marked in
// both.

import { escapeHTML as esc } from "./cel.js";

export function createSource(textarea) {
  const edit = document.createElement("div");
  edit.className = "source-edit";
  edit.innerHTML = `<div class="gutter" aria-hidden="true"><div class="gutter-lines"></div></div>` +
    `<div class="source-body"><div class="source-marks" aria-hidden="true"></div></div>`;
  textarea.replaceWith(edit);
  edit.querySelector(".source-body").appendChild(textarea);
  const gutter = edit.querySelector(".gutter-lines");
  const marks = edit.querySelector(".source-marks");
  const s = { count: 0, marked: new Map(), key: "" };
  const here = document.createElement("div");
  here.className = "here";
  here.hidden = true;

  // metrics: the textarea's line height and the top of its first line.
  const metrics = () => {
    const cs = getComputedStyle(textarea);
    return { lh: parseFloat(cs.lineHeight) || 18, top: parseFloat(cs.paddingTop) + parseFloat(cs.borderTopWidth) };
  };

  function draw() {
    const count = textarea.value.split("\n").length;
    const key = `${count}|${[...s.marked.keys()].join(",")}`;
    if (key !== s.key) {
      s.key = key;
      const { lh, top } = metrics();
      gutter.style.paddingTop = `${top}px`;
      const rows = [];
      for (let i = 1; i <= count; i++) {
        const m = s.marked.get(i);
        rows.push(m ? `<div class="ln err" title="${esc(m.join("\n"))}">${i}</div>` : `<div class="ln">${i}</div>`);
      }
      gutter.innerHTML = rows.join("");
      gutter.style.setProperty("--lh", `${lh}px`);
      marks.innerHTML = [...s.marked.keys()].filter((l) => l <= count)
        .map((l) => `<div class="mark" style="top:${top + (l - 1) * lh}px;height:${lh}px"></div>`).join("");
      marks.appendChild(here);
    }
    scroll();
  }

  function scroll() {
    gutter.style.transform = `translateY(${-textarea.scrollTop}px)`;
    marks.style.transform = `translateY(${-textarea.scrollTop}px)`;
  }

  textarea.addEventListener("scroll", scroll);
  textarea.addEventListener("input", () => {
    here.hidden = true;
    draw();
  });
  new ResizeObserver(() => { s.key = ""; draw(); }).observe(textarea);

  return {
    draw,
    // mark takes [{line, message}] and marks those lines.
    mark(list) {
      s.marked = new Map();
      for (const p of list) {
        if (!p.line) continue;
        if (!s.marked.has(p.line)) s.marked.set(p.line, []);
        s.marked.get(p.line).push(p.message);
      }
      draw();
    },
    // goto puts the cursor at the start of a line's text, scrolls the
    // line into view a third of the way down, and marks it until the next
    // keystroke.
    goto(line) {
      const lines = textarea.value.split("\n");
      const n = Math.max(1, Math.min(line, lines.length));
      let at = 0;
      for (let i = 0; i < n - 1; i++) at += lines[i].length + 1;
      at += lines[n - 1].length - lines[n - 1].trimStart().length;
      textarea.focus({ preventScroll: true });
      textarea.setSelectionRange(at, at);
      const { lh } = metrics();
      textarea.scrollTop = Math.max(0, (n - 1) * lh - textarea.clientHeight / 3);
      const { top } = metrics();
      here.style.top = `${top + (n - 1) * lh}px`;
      here.style.height = `${lh}px`;
      here.hidden = false;
      scroll();
      textarea.dataset.cursorLine = String(n);
    },
  };
}
