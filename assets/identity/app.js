// The /identity/ui editor. Data only through window.memsvc.api (auth.js), so
// the page itself holds nothing and works remotely with the token prompt.
// One section is edited at a time: leaving a tab with unsaved edits asks first.
(function () {
  "use strict";
  const NAME = /^[a-z0-9][a-z0-9_-]*$/;
  const NAME_MAX = 64;
  const MEMORY = "memory";
  const OTHER = "__other__";
  const $ = (id) => document.getElementById(id);
  const el = {
    scope: $("scope"), mode: $("mode"), meta: $("meta"), tabs: $("tabs"), editor: $("editor"), preview: $("preview"),
    save: $("save"), status: $("status"), notice: $("notice"), newForm: $("new-section"), newName: $("new-name"),
    newError: $("new-error"), agentForm: $("agent-form"), agentName: $("agent-name"), agentError: $("agent-error"),
    agentCancel: $("agent-cancel"),
  };

  const state = {
    agent: new URL(location.href).searchParams.get("agent") || null, // null: global scope
    agents: {}, // id -> mode, from the global GET
    view: null, // last GET of the current scope
    saved: {}, // name -> body as the server has it
    added: null, // name of a section added here and not saved yet
    current: null, // name of the open tab
    busy: false,
  };

  // Markdown: the shared renderer (marked + DOMPurify, assets/shared/markdown.js):
  // tables, task lists and fenced code; raw HTML in a section shows as text.
  const renderMarkdown = (src) => window.memsvcMarkdown.render(src);

  // ---- feedback
  function setStatus(kind, text) {
    el.status.className = "status " + kind;
    el.status.textContent = text;
  }
  async function errorText(res) {
    try {
      const body = await res.json();
      if (body && body.error && body.error.message) return body.error.message;
    } catch (_) { /* not JSON */ }
    return "HTTP " + res.status;
  }

  // ---- data
  const scopeQuery = () => (state.agent ? "?agent=" + encodeURIComponent(state.agent) : "");
  async function getJson(path) {
    const res = await window.memsvc.api(path);
    if (!res.ok) throw new Error((res.status === 401 ? "Not authorized: " : "") + (await errorText(res)));
    return res.json();
  }
  async function load(keepTab) {
    try {
      const global = await getJson("/identity");
      state.agents = global.agents || {};
      state.view = state.agent ? await getJson("/identity" + scopeQuery()) : global;
    } catch (e) {
      setStatus("error", "Could not load the identity sections: " + e.message);
      return false;
    }
    state.saved = Object.assign({}, state.view.sections);
    const names = Object.keys(state.saved);
    const wanted = keepTab && (names.includes(keepTab) || keepTab === state.added) ? keepTab : names.find((n) => n !== MEMORY) || names[0] || null;
    if (state.added && !names.includes(state.added) && wanted !== state.added) state.added = null;
    renderScope();
    openTab(wanted);
    return true;
  }

  // ---- rendering
  function renderScope() {
    el.scope.textContent = "";
    const add = (value, label) => { const o = document.createElement("option"); o.value = value; o.textContent = label; el.scope.appendChild(o); };
    add("", "Global");
    const ids = Object.keys(state.agents);
    if (state.agent && !ids.includes(state.agent)) ids.push(state.agent);
    for (const id of ids.sort()) add(id, "Agent " + id + " (" + (state.agents[id] || (state.view && state.view.mode) || "global") + ")");
    add(OTHER, "Other agent…");
    el.scope.value = state.agent || "";
    const v = state.view;
    if (state.agent && v) {
      el.mode.hidden = false;
      el.mode.textContent = "mode: " + v.mode;
      el.mode.className = "badge mode-" + v.mode;
    } else {
      el.mode.hidden = true;
    }
    const updated = v && v.updated_at ? "updated " + new Date(v.updated_at).toLocaleString() : "no section files yet";
    el.meta.textContent = updated + (v && v.clients ? " · injected into: " + (v.clients.join(", ") || "no harness") : "");
  }

  function tabNames() {
    const names = Object.keys(state.saved);
    if (state.added && !names.includes(state.added)) names.splice(names.includes(MEMORY) ? names.indexOf(MEMORY) : names.length, 0, state.added);
    return names;
  }

  function renderTabs() {
    el.tabs.textContent = "";
    const origins = (state.view && state.view.origins) || null;
    for (const name of tabNames()) {
      const b = document.createElement("button");
      b.type = "button";
      b.setAttribute("role", "tab");
      b.dataset.name = name;
      b.setAttribute("aria-selected", String(name === state.current));
      const label = document.createElement("span");
      label.textContent = name;
      b.appendChild(label);
      const tag = (text, cls) => { const t = document.createElement("span"); t.className = "tag " + cls; t.textContent = text; b.appendChild(t); };
      if (name === MEMORY) tag("read-only", "readonly");
      else if (origins && origins[name]) tag(origins[name], "origin-" + origins[name]);
      if (name === state.added) tag("new", "new");
      if (name === state.current && isDirty()) { const d = document.createElement("span"); d.className = "dirty"; d.textContent = "●"; d.title = "unsaved changes"; b.appendChild(d); }
      b.addEventListener("click", () => switchTab(name));
      el.tabs.appendChild(b);
    }
  }

  function isDirty() {
    if (!state.current || state.current === MEMORY) return false;
    if (state.current === state.added) return true;
    return el.editor.value !== (state.saved[state.current] || "");
  }

  function notice(text) {
    el.notice.hidden = !text;
    el.notice.textContent = text || "";
  }

  function openTab(name) {
    state.current = name;
    const readOnly = name === MEMORY;
    el.editor.disabled = name === null;
    el.editor.readOnly = readOnly;
    el.editor.value = name === null ? "" : name === state.added && !(name in state.saved) ? "" : state.saved[name] || "";
    el.save.hidden = readOnly;
    const v = state.view || {};
    if (name === null) notice(state.agent && v.mode === "off" ? "Identity is off for agent " + state.agent + " (set in config.json)." : "No sections yet: add one.");
    else if (readOnly) notice("Read-only: the memory instructions come with the server and change with its version. Set memoryInstructions: false in config.json to turn them off.");
    else if (state.agent && v.mode === "off") notice("Identity is off for agent " + state.agent + " (config.json identityAgents); it gets no sections, and saving here is refused.");
    else if (state.agent && v.mode === "global" && state.agents[state.agent] === "global") notice("Agent " + state.agent + " is set to global in config.json: it sees the global sections and cannot have its own.");
    else if (state.agent && v.origins && v.origins[name] === "global") notice("Inherited from the global scope. Saving stores an override of “" + name + "” for agent " + state.agent + " only.");
    else if (state.agent && v.mode === "global") notice("Agent " + state.agent + " sees the global sections. Saving creates its own folder and switches it to override mode.");
    else notice("");
    refresh();
  }

  function refresh() {
    window.memsvcMarkdown.into(el.preview, el.editor.value);
    el.save.disabled = state.busy || state.current === null || state.current === MEMORY || !isDirty();
    renderTabs();
  }

  function confirmDiscard() {
    if (!isDirty()) return true;
    return window.confirm("Discard unsaved changes to “" + state.current + "”?");
  }

  function switchTab(name) {
    if (name === state.current) return;
    if (!confirmDiscard()) return;
    if (state.added && state.current === state.added) state.added = null;
    setStatus("", "");
    openTab(name);
  }

  // ---- actions
  async function save() {
    const name = state.current;
    if (!name || name === MEMORY || state.busy) return;
    const body = el.editor.value;
    state.busy = true;
    refresh();
    setStatus("info", "Saving…");
    let res;
    try {
      res = await window.memsvc.api("/identity" + scopeQuery(), {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sections: { [name]: body } }),
      });
    } catch (e) {
      state.busy = false;
      refresh();
      setStatus("error", "Not saved: the server could not be reached (" + e.message + ").");
      return;
    }
    state.busy = false;
    if (res.ok) {
      const result = await res.json();
      const where = state.agent ? "agent " + state.agent + (result.mode ? " (" + result.mode + ")" : "") : "global scope";
      if (state.added === name) state.added = null;
      await load(name);
      setStatus("ok", "Saved “" + name + "” to the " + where + ".");
    } else {
      const message = await errorText(res);
      refresh();
      if (res.status === 409) setStatus("error", "Not saved (conflict): " + message);
      else if (res.status === 400) setStatus("error", "Not saved, the server rejected it: " + message);
      else setStatus("error", "Not saved (HTTP " + res.status + "): " + message);
    }
  }

  function checkName(name, what, taken) {
    if (!name) return "Enter a " + what + ".";
    if (name.length > NAME_MAX) return "Too long: at most " + NAME_MAX + " characters.";
    if (!NAME.test(name)) return "Use lowercase letters, digits, - and _, starting with a letter or digit.";
    if (taken) return taken(name);
    return "";
  }

  function addSection(ev) {
    ev.preventDefault();
    const name = el.newName.value.trim();
    const problem = checkName(name, "section name", (n) => {
      if (n === MEMORY) return "“memory” is reserved for the server's read-only instructions.";
      if (tabNames().includes(n)) return "“" + n + "” already exists in this scope.";
      return "";
    });
    el.newError.textContent = problem;
    if (problem) return;
    if (!confirmDiscard()) return;
    state.added = name;
    el.newName.value = "";
    setStatus("info", "New section “" + name + "”: write it, then Save.");
    openTab(name);
    el.editor.focus();
  }

  async function changeScope() {
    const value = el.scope.value;
    if (value === OTHER) {
      el.agentForm.hidden = false;
      el.agentError.textContent = "";
      el.agentName.focus();
      el.scope.value = state.agent || "";
      return;
    }
    await goToScope(value || null);
  }

  async function goToScope(agent) {
    if (agent === state.agent) return;
    if (!confirmDiscard()) { el.scope.value = state.agent || ""; return; }
    state.agent = agent;
    state.added = null;
    const url = new URL(location.href);
    if (agent) url.searchParams.set("agent", agent); else url.searchParams.delete("agent");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    setStatus("", "");
    await load(state.current);
  }

  async function openAgent(ev) {
    ev.preventDefault();
    const id = el.agentName.value.trim();
    const problem = checkName(id, "agent id");
    el.agentError.textContent = problem;
    if (problem) return;
    el.agentForm.hidden = true;
    el.agentName.value = "";
    await goToScope(id);
  }

  el.editor.addEventListener("input", refresh);
  el.editor.addEventListener("keydown", (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "s") { ev.preventDefault(); save(); }
  });
  el.save.addEventListener("click", save);
  el.newForm.addEventListener("submit", addSection);
  el.newName.addEventListener("input", () => { el.newError.textContent = ""; });
  el.scope.addEventListener("change", changeScope);
  el.agentForm.addEventListener("submit", openAgent);
  el.agentCancel.addEventListener("click", () => { el.agentForm.hidden = true; el.agentError.textContent = ""; });
  window.addEventListener("beforeunload", (ev) => {
    if (!isDirty()) return;
    ev.preventDefault();
    ev.returnValue = "";
  });

  window.memsvcIdentity = { renderMarkdown }; // for tests and the console
  if (state.agent && (state.agent.length > NAME_MAX || !NAME.test(state.agent))) {
    setStatus("error", "Ignoring ?agent=: not a valid agent id.");
    state.agent = null;
  }
  load(null);
})();
