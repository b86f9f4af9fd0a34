// Confirmation before a destructive form post: a form, or the button
// that submits it, with a data-confirm attribute submits only once the
// person agrees to its text. Without this script the form posts at once.

document.addEventListener("submit", (ev) => {
  const button = ev.submitter && ev.submitter.closest("[data-confirm]");
  const form = ev.target.closest("form[data-confirm]");
  const text = (button && button.dataset.confirm) || (form && form.dataset.confirm);
  if (text && !window.confirm(text)) ev.preventDefault();
});
