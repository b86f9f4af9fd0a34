// The runs list: selecting runs (one by one, the page, or every run the
// filter matches) for a bulk cancel or retry, whose confirmation says how
// many runs it acts on; and, on the first page, a live refresh of the
// rows every few seconds while nothing is selected.

const page = document.getElementById("runs-page");
const REFRESH_MS = 5000;
const $ = (id) => document.getElementById(id);

function picks() {
  return [...document.querySelectorAll("input.pick-run")];
}

// exact is the server's exact count of the runs the filter matches, asked
// for when "all matching" is chosen while the list only estimates its
// total: a destructive confirmation names the number it acts on.
let exact = null;

function selection() {
  if ($("select-matching") && $("select-matching").checked) {
    if (page.dataset.estimated === "true") {
      if (!exact) return { n: Number(page.dataset.total), all: true, counting: true };
      return { n: exact.count, all: true, more: exact.more, about: exact.about };
    }
    return { n: Number(page.dataset.total), all: true };
  }
  return { n: picks().filter((p) => p.checked).length, all: false };
}

function runsText(s) {
  const n = s.n.toLocaleString("en-US");
  if (s.counting) return `the runs matching this filter (counting…)`;
  const how = s.more ? "more than " : s.about ? "about " : "all ";
  if (s.all) return `${how}${n} run${s.n === 1 ? "" : "s"} matching this filter`;
  return `${n} selected run${s.n === 1 ? "" : "s"}`;
}

async function countExactly() {
  if (exact || page.dataset.estimated !== "true") return;
  const form = $("bulk-form");
  const filter = form.querySelector('input[name="filter"]').value;
  try {
    const res = await fetch(`${form.action.replace(/\/batch$/, "/count")}?${filter}`, { credentials: "same-origin", headers: { Accept: "application/json" } });
    exact = res.ok ? await res.json() : null;
  } catch {
    exact = null;
  }
  // Without an answer, the confirmation says it is an estimate.
  if (!exact) exact = { count: Number(page.dataset.total), about: true };
  update();
}

function update() {
  const s = selection();
  const count = $("selected-count");
  if (!count) return;
  count.textContent = s.n ? runsText(s) : "none selected";
  for (const p of picks()) p.disabled = s.all;
  if ($("select-page")) $("select-page").disabled = s.all;
  const cancel = $("bulk-cancel");
  const retry = $("bulk-retry");
  cancel.disabled = retry.disabled = s.n === 0 || !!s.counting;
  cancel.dataset.confirm = `Cancel ${runsText(s)}? Their open steps are cancelled; runs that already ended are left as they are.`;
  retry.dataset.confirm = `Retry ${runsText(s)} from the step that failed or was cancelled? Runs that did not fail or were not cancelled are left as they are.`;
}

function wireSelection() {
  document.addEventListener("change", (ev) => {
    if (ev.target.id === "select-page") for (const p of picks()) p.checked = ev.target.checked;
    if (ev.target.matches("input.pick-run, #select-matching, #select-page")) update();
    if (ev.target.id === "select-matching" && ev.target.checked) countExactly();
  });
  update();
}

// ---- live refresh of the first page ----

function live() {
  const toggle = $("live-refresh");
  return page.dataset.live === "true" && toggle && toggle.checked && !document.hidden && selection().n === 0;
}

async function refresh() {
  if (!live()) return;
  try {
    const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    if (!live()) return;
    for (const id of ["runs-body", "runs-total", "batches", "runs-empty"]) {
      const mine = $(id);
      const fresh = doc.getElementById(id);
      if (mine && fresh && mine.innerHTML !== fresh.innerHTML) mine.innerHTML = fresh.innerHTML;
    }
    const fresh = doc.getElementById("runs-page");
    if (fresh) {
      page.dataset.total = fresh.dataset.total;
      page.dataset.estimated = fresh.dataset.estimated;
    }
    page.dataset.refreshed = String(Number(page.dataset.refreshed || 0) + 1);
    update();
  } catch {
    // The next round tries again.
  }
}

if (page) {
  wireSelection();
  setInterval(refresh, REFRESH_MS);
}
