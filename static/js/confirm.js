// Confirmation before a destructive form post: a form with a
// data-confirm attribute submits only once the person agrees to its
// text. Without this script the form posts at once.

document.addEventListener("submit", (ev) => {
  const form = ev.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) ev.preventDefault();
});
