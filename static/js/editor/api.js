// Talking to the server: form posts with the session's CSRF token,
// answered in JSON.

export function poster(csrf) {
  return async function post(url, fields) {
    const body = new URLSearchParams(fields);
    const res = await fetch(url, {
      method: "POST",
      body,
      credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, Accept: "application/json" },
    });
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    return { status: res.status, ok: res.ok, data };
  };
}

// debounce delays fn until calls stop for ms; flush runs a pending call
// at once and returns its promise.
export function debounce(fn, ms) {
  let timer = null;
  let pending = null;
  const run = () => {
    timer = null;
    const args = pending;
    pending = null;
    return fn(...args);
  };
  const call = (...args) => {
    pending = args;
    clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  call.flush = () => {
    if (!pending) return Promise.resolve();
    clearTimeout(timer);
    return Promise.resolve(run());
  };
  return call;
}
