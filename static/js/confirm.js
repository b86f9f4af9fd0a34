// Confirmation before a destructive form post, and copy buttons. A form,
// or the button that submits it, with a data-confirm attribute submits
// only once the person agrees to its text. Without this script the form
// posts at once.

document.addEventListener("submit", (ev) => {
  const button = ev.submitter && ev.submitter.closest("[data-confirm]");
  const form = ev.target.closest("form[data-confirm]");
  const text = (button && button.dataset.confirm) || (form && form.dataset.confirm);
  if (text && !window.confirm(text)) ev.preventDefault();
});

// A button with data-copy="ID" copies that element's text (a secret
// shown once) to the clipboard; it is shown only where the script runs.
for (const b of document.querySelectorAll("button[data-copy]")) {
  b.hidden = false;
  b.addEventListener("click", async () => {
    const el = document.getElementById(b.dataset.copy);
    try {
      await navigator.clipboard.writeText(el.textContent.trim());
      b.textContent = "Copied";
    } catch {
      const r = document.createRange();
      r.selectNodeContents(el);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(r);
      b.textContent = "Selected: press Ctrl+C";
    }
  });
}
