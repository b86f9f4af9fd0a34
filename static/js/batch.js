// A bulk operation's page: its progress bar and counts follow the batch
// until it finishes (or is stopped), and its Stop button goes; then the
// page reloads when there are runs it could not act on, to list them.

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
        st.className = "status " + (b.status === "stopped" ? "cancelled" : b.failed ? "wait" : "succeeded");
        document.getElementById("batch-stop-form")?.remove();
        document.getElementById("batch-finished").textContent = b.finished_at ? new Date(b.finished_at).toISOString().replace("T", " ").slice(0, 23) : "–";
        root.dataset.finished = "true";
        if (b.failed) location.reload();
        return;
      }
    }
  } catch {
    // Tried again on the next round.
  }
  setTimeout(poll, POLL_MS);
}

if (root && root.dataset.finished !== "true") setTimeout(poll, POLL_MS);
