// A bulk operation's page: its progress bar and counts follow the batch
// until it finishes, then the page reloads to list what could not be done.

const root = document.getElementById("batch");
const POLL_MS = 500;

async function poll() {
  try {
    const res = await fetch(root.dataset.progress, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (res.ok) {
      const b = await res.json();
      const bar = document.getElementById("batch-progress");
      bar.max = Math.max(b.total, 1);
      bar.value = b.done + b.failed;
      const verb = b.action === "retry" ? "retried" : "cancelled";
      document.getElementById("batch-counts").textContent =
        `${b.done.toLocaleString("en-US")} of ${b.total.toLocaleString("en-US")} ${verb}, ${b.failed.toLocaleString("en-US")} failed`;
      const st = document.getElementById("batch-status");
      st.textContent = b.status;
      if (b.status !== "running") {
        location.reload();
        return;
      }
    }
  } catch {
    // Tried again on the next round.
  }
  setTimeout(poll, POLL_MS);
}

if (root && root.dataset.finished !== "true") setTimeout(poll, POLL_MS);
