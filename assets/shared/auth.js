// Shared by every page shell: finds the bearer token (from ?token=, then
// localStorage), strips it from the address bar, and wraps fetch. From
// localhost the server needs no token, so none is asked for until a 401.
(function () {
  const KEY = "memsvc.token";
  const url = new URL(window.location.href);
  const fromQuery = url.searchParams.get("token");
  if (fromQuery) {
    try { localStorage.setItem(KEY, fromQuery); } catch (_) { /* storage disabled: keep it in memory */ }
    url.searchParams.delete("token");
    window.history.replaceState(null, "", url.pathname + (url.search ? url.search : "") + url.hash);
  }
  let memoryToken = fromQuery || null;
  function token() {
    try { return localStorage.getItem(KEY) || memoryToken; } catch (_) { return memoryToken; }
  }
  function setToken(t) {
    memoryToken = t;
    try { if (t) localStorage.setItem(KEY, t); else localStorage.removeItem(KEY); } catch (_) { /* ignore */ }
  }
  function askToken(message) {
    return new Promise((resolve) => {
      let dlg = document.getElementById("memsvc-token-dialog");
      if (!dlg) {
        dlg = document.createElement("dialog");
        dlg.id = "memsvc-token-dialog";
        dlg.innerHTML =
          '<form method="dialog"><p class="msg"></p>' +
          '<label>Bearer token <input name="token" type="password" autocomplete="off" size="48"></label>' +
          '<menu><button value="ok" id="memsvc-token-ok">Use token</button></menu></form>';
        document.body.appendChild(dlg);
      }
      dlg.querySelector(".msg").textContent = message;
      const input = dlg.querySelector("input");
      input.value = "";
      dlg.onclose = () => resolve(input.value.trim() || null);
      dlg.showModal();
    });
  }
  async function api(path, init) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const headers = new Headers((init && init.headers) || {});
      const t = token();
      if (t) headers.set("Authorization", "Bearer " + t);
      const res = await fetch(path, Object.assign({}, init, { headers }));
      if (res.status !== 401) return res;
      const t2 = await askToken(t ? "That token was refused. Paste the token `memsvc status` prints." : "This server needs its bearer token (`memsvc status` prints it).");
      if (!t2) return res;
      setToken(t2);
    }
    return fetch(path, init);
  }
  window.memsvc = { api, token, setToken };
})();
