// /viz: loads the export slice from the bearer-only /graph?op=export (through
// window.memsvc.api, which supplies the token on remote browsers), drives the
// filters, colours, search and the detail panel. The full text of a memory
// comes from op=neighbors, which, unlike GET /memory, does not mark it used.
(function () {
  "use strict";
  const { createView, hasWebGL, escapeHtml } = window.memsvcViz;
  const $ = (sel) => document.querySelector(sel);

  // Colours shared with every page (assets/shared/colors.js): stable per name, not per rank.
  const COLORS = window.memsvcColors;
  const FILTERS = ["domain", "type", "tag", "minStrength", "limit"];

  const state = {
    data: null, nodes: [], byId: new Map(), links: [], view: null, webgl: false, mode: "3d", colorBy: "domain",
    domainColors: new Map(), selected: null, error: null, loads: 0, matches: [], matchAt: -1, lastQuery: "", knownTags: new Set(),
  };
  const form = $("#filters");

  function notice(text) {
    const el = $("#notice");
    el.textContent = text || "";
    el.hidden = !text;
  }
  const setStatus = (text) => ($("#status").textContent = text);

  function filters() {
    const out = {};
    for (const name of FILTERS) {
      const v = String(form.elements[name].value || "").trim();
      if (v) out[name] = v;
    }
    return out;
  }

  function readUrl() {
    const p = new URLSearchParams(location.search);
    for (const name of FILTERS) {
      if (!p.has(name)) continue;
      const el = form.elements[name];
      // The domain list arrives with the first export: until then the option
      // named in the URL must exist, or setting the value silently drops it.
      if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === p.get(name))) el.add(new Option(p.get(name), p.get(name)));
      el.value = p.get(name);
    }
    if (p.get("view") === "2d") state.mode = "2d";
    if (p.get("color") === "type") state.colorBy = "type";
  }

  function writeUrl() {
    const p = new URLSearchParams(filters());
    if (state.mode === "2d") p.set("view", "2d");
    if (state.colorBy === "type") p.set("color", "type");
    const qs = p.toString();
    history.replaceState(null, "", location.pathname + (qs ? "?" + qs : "") + location.hash);
  }

  async function load() {
    writeUrl();
    setStatus("Loading…");
    const q = new URLSearchParams(Object.assign({ op: "export" }, filters()));
    let res, body;
    try {
      res = await window.memsvc.api("/graph?" + q.toString());
      body = await res.json().catch(() => null);
    } catch (e) {
      return fail("Could not reach the server: " + e.message);
    }
    if (!res.ok) return fail(body && body.error ? body.error.message : "The server answered " + res.status);
    state.error = null;
    state.data = body;
    state.domainColors = new Map(body.domains.map((d) => [d.name, COLORS.domain(d.name)]));
    state.links = body.edges;
    for (const n of body.nodes) for (const t of n.tags) state.knownTags.add(t.tag);
    fillOptions();
    await render();
    state.loads++;
  }

  function fail(message) {
    state.error = message;
    setStatus("Error: " + message);
    state.loads++;
  }

  function colorOf(n) {
    return state.colorBy === "type" ? COLORS.type(n.memory_type) : COLORS.domain(n.domain);
  }

  async function render() {
    const data = state.data;
    if (!data) return;
    const el = $("#graph");
    if (!state.view || state.view.mode !== state.mode) {
      if (state.view) state.view.destroy();
      state.view = null;
      try {
        state.view = createView(el, state.mode, { onClick: clickNode, onBackground: () => select(null), onSettled: () => {} });
      } catch (e) {
        if (state.mode !== "3d") throw e;
        state.webgl = false;
        state.mode = "2d";
        notice("The 3D view could not start (" + e.message + "). Showing the 2D view.");
        syncButtons();
        state.view = createView(el, "2d", { onClick: clickNode, onBackground: () => select(null) });
      }
    }
    // Fresh objects per render: the libraries attach layout and scene state to them.
    state.nodes = data.nodes.map((n) => Object.assign({}, n, { val: 0.4 + 1.6 * Math.min(n.effective_strength, 5), color: "" }));
    for (const n of state.nodes) n.color = colorOf(n);
    state.byId = new Map(state.nodes.map((n) => [n.id, n]));
    state.matches = [];
    state.lastQuery = "";
    const previous = state.selected && state.byId.get(state.selected.id);
    if (state.nodes.length > 1500) {
      setStatus("Laying out " + state.nodes.length + " memories…");
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    }
    state.view.setData({ nodes: state.nodes, links: state.links.map((e) => ({ source: e.source, target: e.target, relationship: e.relationship, weight: e.weight })) });
    if (previous) select(previous, true);
    else select(null);
    renderLegend();
    renderStatus();
  }

  function renderStatus() {
    const m = state.data.meta;
    const empty = m.total_memories === 0 ? "No memories yet: the graph fills as agents capture sessions." : m.nodes === 0 ? "No memory matches these filters. Reset them or pick another domain or type." : "";
    $("#empty").textContent = empty;
    $("#empty").hidden = !empty;
    if (m.total_memories === 0) return setStatus("No memories yet: the graph fills as agents capture sessions.");
    if (m.nodes === 0) return setStatus("No memory matches these filters (" + m.total_memories + " in store).");
    let text = m.nodes + " memories · " + m.edges + " links";
    if (m.truncated) text += " · the strongest " + m.nodes + " of " + m.matched + " matching (raise the limit or filter)";
    text += " · " + m.total_memories + " in store · " + state.mode.toUpperCase();
    setStatus(text);
  }

  function fillOptions() {
    const sel = form.elements.domain;
    const current = sel.value;
    const names = state.data.domains.map((d) => d.name);
    if (current && !names.includes(current)) names.push(current);
    sel.replaceChildren(new Option("all", ""));
    for (const name of names) {
      const d = state.data.domains.find((x) => x.name === name);
      sel.add(new Option(d ? name + " (" + d.memories + ")" : name, name));
    }
    sel.value = current;
    const list = $("#tag-list");
    list.replaceChildren(...[...state.knownTags].sort().slice(0, 500).map((t) => new Option(t)));
  }

  function renderLegend() {
    const box = $("#legend");
    box.replaceChildren();
    const entries =
      state.colorBy === "type"
        ? state.data.types.map((t) => ({ name: t.name, count: t.nodes, color: COLORS.type(t.name), filter: "type" }))
        : state.data.domains.filter((d) => d.nodes > 0).sort((a, b) => b.nodes - a.nodes).map((d) => ({ name: d.name, count: d.nodes, color: COLORS.domain(d.name), filter: "domain" }));
    for (const e of entries.slice(0, 24)) {
      const b = document.createElement("button");
      b.type = "button";
      b.title = "Show only " + e.filter + " " + e.name;
      b.innerHTML = '<i style="background:' + e.color + '"></i>' + escapeHtml(e.name) + " <span>" + e.count + "</span>";
      b.addEventListener("click", () => {
        form.elements[e.filter].value = e.name;
        load();
      });
      box.appendChild(b);
    }
    if (entries.length > 24) box.appendChild(Object.assign(document.createElement("span"), { textContent: "+" + (entries.length - 24) + " more" }));
  }

  /** A click selects the node and brings it to the middle of the view. */
  function clickNode(node) {
    select(node);
    if (node && state.view) state.view.focus(node);
  }

  function select(node, quiet) {
    state.selected = node || null;
    if (state.view) state.view.select(state.selected);
    if (!node) {
      $("#detail").hidden = true;
      return;
    }
    if (!quiet || $("#detail").hidden) showDetail(node);
  }

  function showDetail(node) {
    window.memsvcVizDetail.show($("#detail"), node, {
      typeColor: COLORS.type(node.memory_type),
      shown: (id) => state.byId.get(id),
      focus: (n) => (state.view.focus(n), select(n)),
    });
  }

  function find(q) {
    const needle = q.trim().toLowerCase();
    const out = $("#search-status");
    if (!needle) return (out.textContent = "");
    if (needle !== state.lastQuery) {
      state.lastQuery = needle;
      state.matchAt = -1;
      state.matches = state.nodes.filter(
        (n) => n.id.startsWith(needle) || n.preview.toLowerCase().includes(needle) || (n.project || "").toLowerCase().includes(needle) || n.tags.some((t) => t.tag.includes(needle)),
      );
    }
    if (state.matches.length === 0) return (out.textContent = "no match in this view");
    state.matchAt = (state.matchAt + 1) % state.matches.length;
    const n = state.matches[state.matchAt];
    out.textContent = state.matchAt + 1 + " of " + state.matches.length;
    state.view.focus(n);
    select(n);
  }

  function syncButtons() {
    for (const b of document.querySelectorAll("[data-mode]")) b.setAttribute("aria-pressed", String(b.dataset.mode === state.mode));
    for (const b of document.querySelectorAll("[data-color]")) b.setAttribute("aria-pressed", String(b.dataset.color === state.colorBy));
    const three = $("#mode-3d");
    three.disabled = !state.webgl;
    three.title = state.webgl ? "3D layout" : "WebGL is not available in this browser";
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    load();
  });
  // The button is not id="reset": a form control with that id would shadow form.reset().
  $("#clear-filters").addEventListener("click", () => {
    form.reset();
    for (const name of FILTERS) form.elements[name].value = "";
    load();
  });
  $("#search").addEventListener("submit", (e) => {
    e.preventDefault();
    find(e.target.elements.q.value);
  });
  for (const b of document.querySelectorAll("[data-mode]")) {
    b.addEventListener("click", () => {
      if (b.disabled || state.mode === b.dataset.mode) return;
      state.mode = b.dataset.mode;
      syncButtons();
      writeUrl();
      render();
    });
  }
  for (const b of document.querySelectorAll("[data-color]")) {
    b.addEventListener("click", () => {
      state.colorBy = b.dataset.color;
      syncButtons();
      writeUrl();
      if (!state.data) return;
      for (const n of state.nodes) n.color = colorOf(n);
      state.view.refreshColors();
      renderLegend();
    });
  }
  $("#detail .close").addEventListener("click", () => select(null));
  document.addEventListener("keydown", (e) => e.key === "Escape" && select(null));
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => state.view && state.view.resize(), 150);
  });

  // Read-only hook for tests and debugging: counts, mode, selection, node positions.
  window.__vizState = {
    get ready() { return state.loads > 0 && !!state.view && (state.view.loaded || !!state.error); },
    get loads() { return state.loads; },
    get mode() { return state.view ? state.view.mode : null; },
    get linkMode() { return state.view ? state.view.linkMode : null; },
    get webgl() { return state.webgl; },
    get colorBy() { return state.colorBy; },
    get nodes() { return state.view ? state.view.graph.graphData().nodes.length : 0; },
    get edges() { return state.view ? state.view.graph.graphData().links.length : 0; },
    get settled() { return !!state.view && state.view.settled; },
    get selected() { return state.selected ? state.selected.id : null; },
    get labelsDrawn() { return state.view ? state.view.labelsDrawn : 0; },
    get highlighted() { return state.view ? state.view.highlighted : null; },
    zoom: (k) => state.view && state.view.mode === "2d" && state.view.graph.zoom(k, 0),
    get error() { return state.error; },
    nodeIds: () => state.nodes.map((n) => n.id),
    colorOf: (id) => (state.byId.get(id) || {}).color || null,
    screenOf: (id) => (state.view ? state.view.screenOf(state.byId.get(id)) : null),
  };

  readUrl();
  state.webgl = hasWebGL();
  if (!state.webgl) {
    state.mode = "2d";
    notice("WebGL is not available in this browser, so the 3D view is off. The 2D view below works without it.");
  }
  syncButtons();
  load();
})();
