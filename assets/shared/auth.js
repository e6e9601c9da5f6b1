// Shared by every page shell: finds the bearer token (from ?token=, then
// localStorage), strips it from the address bar, and wraps fetch. From
// localhost the server needs no token, so none is asked for until a 401.
// A token is stored only once the server has accepted it; pages send no
// Referer (meta referrer + Referrer-Policy), so it cannot leak through one.
(function () {
  const KEY = "memsvc.token";
  const url = new URL(window.location.href);
  const fromQuery = url.searchParams.get("token");
  if (fromQuery !== null) {
    url.searchParams.delete("token");
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  // A candidate not yet accepted by the server lives only in this variable.
  let pending = fromQuery || null;
  let accepted = null;
  function stored() {
    try { return localStorage.getItem(KEY); } catch (_) { return null; }
  }
  function token() { return pending || accepted || stored(); }
  function setToken(t) {
    accepted = t || null;
    pending = null;
    try { if (t) localStorage.setItem(KEY, t); else localStorage.removeItem(KEY); } catch (_) { /* storage disabled: keep it in memory */ }
  }
  function dialog() {
    let dlg = document.getElementById("memsvc-token-dialog");
    if (dlg) return dlg;
    dlg = document.createElement("dialog");
    dlg.id = "memsvc-token-dialog";
    dlg.className = "memsvc-token";
    dlg.innerHTML =
      '<form method="dialog"><h2>Token needed</h2><p class="msg"></p>' +
      '<label>Bearer token <input name="token" type="password" autocomplete="off" spellcheck="false"></label>' +
      '<p class="hint">Run <code>memsvc status</code> on the server machine to print it.</p>' +
      '<menu><button type="button" value="cancel" id="memsvc-token-cancel">Cancel</button>' +
      '<button type="submit" value="ok" id="memsvc-token-ok" class="primary">Retry</button></menu></form>';
    document.body.appendChild(dlg);
    return dlg;
  }
  let asking = null;
  /** Resolves with the token typed, or null on Cancel / Escape; requests refused together share one prompt. */
  function askToken(message) {
    if (asking) return asking;
    asking = new Promise((resolve) => {
      const dlg = dialog();
      dlg.querySelector(".msg").textContent = message;
      const input = dlg.querySelector("input");
      input.value = "";
      let answer = null;
      dlg.querySelector("#memsvc-token-cancel").onclick = () => dlg.close();
      dlg.querySelector("form").onsubmit = (e) => {
        e.preventDefault();
        answer = input.value.trim() || null;
        dlg.close();
      };
      dlg.onclose = () => resolve(answer);
      dlg.showModal();
      input.focus();
    }).finally(() => { asking = null; });
    return asking;
  }
  async function api(path, init) {
    for (let attempt = 0; attempt < 4; attempt++) {
      const headers = new Headers((init && init.headers) || {});
      const t = token();
      if (t) headers.set("Authorization", "Bearer " + t);
      const res = await fetch(path, Object.assign({}, init, { headers, referrerPolicy: "no-referrer" }));
      if (res.status !== 401) {
        // The server took it: only now is a new token worth keeping.
        if (t && t === pending) setToken(t);
        return res;
      }
      if (t === pending) pending = null;
      else if (t && t === stored()) setToken(null);
      const typed = await askToken(t ? "The server refused that token." : "This server needs its bearer token.");
      if (!typed) return res;
      pending = typed;
    }
    return fetch(path, init);
  }
  window.memsvc = { api, token, setToken };
})();
