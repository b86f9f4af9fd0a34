// Zoom, fit, pan and a minimap for a server-drawn SVG graph. Without this
// script the graph is drawn at its natural size in a scrolling box; with
// it the box keeps its size and the SVG's viewBox moves: the buttons and
// + − 0 1 zoom and fit, a drag or the arrow keys pan, ctrl+wheel zooms at
// the pointer, and a click on the minimap centres the view there.

const MIN_SCALE = 0.1;
const MAX_SCALE = 3;

export function graphView(wrap, svg, buttons) {
  const full = svg.viewBox.baseVal;
  const size = { w: full.width, h: full.height };
  const v = { x: 0, y: 0, k: 1 }; // view origin in graph units, scale
  let fitted = false; // fitted views refit when the box changes size
  // The box is as tall as the graph at actual size needs, up to its
  // maximum; a small graph gets a small box.
  wrap.style.setProperty("--graph-h", `${Math.ceil(size.h) + 16}px`);
  wrap.classList.add("zoomable");
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  const mini = minimap(wrap, svg, size);

  function box() {
    return { w: wrap.clientWidth || 800, h: wrap.clientHeight || 400 };
  }
  function apply() {
    const b = box();
    const w = b.w / v.k;
    const h = b.h / v.k;
    v.x = clamp(v.x, -w / 2, Math.max(size.w - w / 2, 0));
    v.y = clamp(v.y, -h / 2, Math.max(size.h - h / 2, 0));
    svg.setAttribute("viewBox", `${v.x} ${v.y} ${w} ${h}`);
    svg.dataset.scale = v.k.toFixed(3);
    mini.show(v.x, v.y, w, h);
  }
  function zoomAt(f, cx, cy) {
    fitted = false;
    const k = clamp(v.k * f, MIN_SCALE, MAX_SCALE);
    v.x += cx / v.k - cx / k;
    v.y += cy / v.k - cy / k;
    v.k = k;
    apply();
  }
  function fit() {
    const b = box();
    v.k = clamp(Math.min(b.w / size.w, b.h / size.h), MIN_SCALE, MAX_SCALE);
    v.x = (size.w - b.w / v.k) / 2;
    v.y = (size.h - b.h / v.k) / 2;
    fitted = true;
    apply();
  }
  function actual() {
    fitted = false;
    v.k = 1;
    v.x = 0;
    v.y = 0;
    apply();
  }
  function centreOn(gx, gy) {
    fitted = false;
    const b = box();
    v.x = gx - b.w / v.k / 2;
    v.y = gy - b.h / v.k / 2;
    apply();
  }
  function pan(dx, dy) {
    fitted = false;
    v.x += dx;
    v.y += dy;
    apply();
  }
  const centre = () => [box().w / 2, box().h / 2];

  buttons.zoomIn.addEventListener("click", () => zoomAt(1.25, ...centre()));
  buttons.zoomOut.addEventListener("click", () => zoomAt(0.8, ...centre()));
  buttons.fit.addEventListener("click", fit);
  buttons.actual.addEventListener("click", actual);
  for (const b of Object.values(buttons)) b.hidden = false;

  wrap.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey && !ev.metaKey) return; // plain wheel scrolls the page
    ev.preventDefault();
    const r = wrap.getBoundingClientRect();
    zoomAt(ev.deltaY < 0 ? 1.1 : 1 / 1.1, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });

  let drag = null;
  wrap.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || ev.target.closest("a, .gedge")) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: v.x, vy: v.y };
    wrap.setPointerCapture(ev.pointerId);
    wrap.classList.add("panning");
  });
  wrap.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    fitted = false;
    v.x = drag.vx - (ev.clientX - drag.x) / v.k;
    v.y = drag.vy - (ev.clientY - drag.y) / v.k;
    apply();
  });
  const stop = () => {
    drag = null;
    wrap.classList.remove("panning");
  };
  wrap.addEventListener("pointerup", stop);
  wrap.addEventListener("pointercancel", stop);

  wrap.tabIndex = 0;
  wrap.setAttribute("aria-label", "Run graph: + and − zoom, 0 fits, 1 is actual size, arrow keys pan");
  wrap.addEventListener("keydown", (ev) => {
    if (ev.target !== wrap && !ev.target.closest(".gedge, a")) return;
    const step = 60 / v.k;
    const keys = {
      "+": () => zoomAt(1.25, ...centre()), "=": () => zoomAt(1.25, ...centre()),
      "-": () => zoomAt(0.8, ...centre()), "0": fit, "1": actual,
      ArrowLeft: () => pan(-step, 0), ArrowRight: () => pan(step, 0),
      ArrowUp: () => pan(0, -step), ArrowDown: () => pan(0, step),
    };
    const act = keys[ev.key];
    if (!act || (ev.key.startsWith("Arrow") && ev.target !== wrap)) return;
    ev.preventDefault();
    act();
  });
  // Focus moving to a node or an edge brings it into view.
  svg.addEventListener("focusin", (ev) => {
    const el = ev.target.closest("a, .gedge");
    if (!el || !el.getBBox) return;
    const bb = el.getBBox();
    const b = box();
    const w = b.w / v.k;
    const h = b.h / v.k;
    if (bb.x < v.x || bb.y < v.y || bb.x + bb.width > v.x + w || bb.y + bb.height > v.y + h) {
      centreOn(bb.x + bb.width / 2, bb.y + bb.height / 2);
    }
  });
  mini.onPick(centreOn);

  // A graph wider or taller than its box starts fitted when it stays
  // readable, else at actual size on its start.
  const b = box();
  if (size.w > b.w || size.h > b.h) {
    const k = Math.min(b.w / size.w, b.h / size.h);
    if (k >= 0.55) fit();
    else actual();
  } else {
    actual();
  }
  new ResizeObserver(() => (fitted ? fit() : apply())).observe(wrap);
  return { fit, actual, zoomAt, state: () => ({ ...v }) };
}

// minimap draws the whole graph small in a corner (a <use> of the graph's
// body, so it follows every repaint) with the view as a rectangle.
function minimap(wrap, svg, size) {
  const NS = "http://www.w3.org/2000/svg";
  const m = document.createElementNS(NS, "svg");
  m.setAttribute("class", "minimap");
  m.setAttribute("viewBox", `0 0 ${size.w} ${size.h}`);
  m.setAttribute("aria-hidden", "true");
  const use = document.createElementNS(NS, "use");
  use.setAttribute("href", "#graph-body");
  const rect = document.createElementNS(NS, "rect");
  rect.setAttribute("class", "minimap-view");
  m.append(use, rect);
  const holder = document.createElement("div");
  holder.className = "minimap-box";
  holder.id = "graph-minimap";
  holder.append(m);
  wrap.parentElement.insertBefore(holder, wrap.nextSibling);
  let pick = () => {};
  m.addEventListener("click", (ev) => {
    const r = m.getBoundingClientRect();
    const scale = Math.max(size.w / r.width, size.h / r.height);
    const ox = (r.width * scale - size.w) / 2;
    const oy = (r.height * scale - size.h) / 2;
    pick((ev.clientX - r.left) * scale - ox, (ev.clientY - r.top) * scale - oy);
  });
  return {
    show(x, y, w, h) {
      rect.setAttribute("x", x);
      rect.setAttribute("y", y);
      rect.setAttribute("width", w);
      rect.setAttribute("height", h);
      holder.hidden = w >= size.w && h >= size.h && x <= 0 && y <= 0;
    },
    onPick(f) {
      pick = f;
    },
  };
}

function clamp(x, lo, hi) {
  return Math.min(hi, Math.max(lo, x));
}
