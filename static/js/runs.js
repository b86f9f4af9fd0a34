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

function selection() {
  if ($("select-matching") && $("select-matching").checked) {
    return { n: Number(page.dataset.total), all: true, estimated: page.dataset.estimated === "true" };
  }
  return { n: picks().filter((p) => p.checked).length, all: false };
}

function runsText(s) {
  const n = s.n.toLocaleString("en-US");
  if (s.all) return `${s.estimated ? "about " + n : "all " + n} run${s.n === 1 ? "" : "s"} matching this filter`;
  return `${n} selected run${s.n === 1 ? "" : "s"}`;
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
  cancel.disabled = retry.disabled = s.n === 0;
  cancel.dataset.confirm = `Cancel ${runsText(s)}? Their open steps are cancelled; runs that already ended are left as they are.`;
  retry.dataset.confirm = `Retry ${runsText(s)} from the step that failed or was cancelled? Runs that did not fail or were not cancelled are left as they are.`;
}

function wireSelection() {
  document.addEventListener("change", (ev) => {
    if (ev.target.id === "select-page") for (const p of picks()) p.checked = ev.target.checked;
    if (ev.target.matches("input.pick-run, #select-matching, #select-page")) update();
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
