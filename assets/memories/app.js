// The memory browser: a filtered, keyset-paged list (GET /memories/list), a
// detail view that does not count as a use (GET /memories/detail), editing
// (PATCH /memory), deleting (DELETE /memory) and bulk deleting a selection
// (GET /memories/count, then POST /memories/delete with that count).
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const form = $("#filters");
  const list = $("#list");
  const detail = $("#detail");
  // detailSeq: bumped by every open and close, so only the newest request may draw the detail.
  const state = { items: [], cursor: null, total: null, selected: -1, openId: null, openDetail: null, seq: 0, loading: false, detailSeq: 0, detailPending: false };
  // Test and benchmark hooks: how many times the list and the detail were drawn.
  // drawnAt / detailAt: performance.now() when the list / the detail was last drawn (bench/browser.ts).
  // detailsDropped: detail answers that arrived after a newer open or a close, and were not drawn.
  const hook = (window.__memories = { renders: 0, details: 0, detailsDropped: 0, lastError: null, idle: true, drawnAt: 0, detailAt: 0 });

  function filterParams() {
    const p = new URLSearchParams();
    for (const el of form.elements) {
      if (!el.name || el.value === "") continue;
      p.set(el.name, el.value.trim());
    }
    if (!p.get("query") && p.get("sort") === "relevance") p.delete("sort");
    return p;
  }

  function showStatus(msg) {
    const el = $("#status");
    el.textContent = msg || "";
    el.hidden = !msg;
  }

  async function errorText(res) {
    try {
      const body = await res.json();
      return body.error ? body.error.message || body.error : res.statusText;
    } catch (_) {
      return res.status + " " + res.statusText;
    }
  }

  const fmtDate = (iso) => (iso ? iso.slice(0, 10) : "—");
  const fmtTime = (iso) => (iso ? iso.replace("T", " ").slice(0, 16) + " UTC" : "never");

  function chip(text, color, cls) {
    const s = document.createElement("span");
    s.className = "chip " + (cls || "");
    s.textContent = text;
    s.style.setProperty("--c", color);
    return s;
  }

  function rowOf(item, index) {
    const li = document.createElement("li");
    li.id = "m-" + item.id;
    li.dataset.index = String(index);
    li.setAttribute("role", "option");
    const top = document.createElement("div");
    top.className = "row-top";
    top.append(chip(item.memory_type, memsvcColors.type(item.memory_type), "type"), chip(item.domain, memsvcColors.domain(item.domain), "domain"));
    // The project is usually the primary domain too: named once.
    if (item.project && item.project !== item.domain) {
      const p = document.createElement("span");
      p.className = "project";
      p.textContent = item.project;
      top.append(p);
    }
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = fmtDate(item.created_at) + " · strength " + item.effective_strength.toFixed(2) + " · shown " + item.shown_count + " · used " + item.used_count + (item.score !== undefined ? " · score " + item.score.toFixed(2) : "");
    top.append(meta);
    drawMarks(top, item.marks);
    const text = document.createElement("p");
    text.className = "preview";
    text.textContent = item.preview;
    li.append(top, text);
    return li;
  }

  // Feedback in force, as a badge after the chips: wrong or outdated wants a review (the Review
  // filter finds them) unless retired (out of recall and search: nothing left to review).
  // Redrawn in place when the detail settles a mark: no badge the server no longer holds.
  function drawMarks(top, marks) {
    for (const old of top.querySelectorAll(".mark")) old.remove();
    const m = marks || [];
    const badge = (text, title, cls) => {
      const c = chip(text, "var(--danger)", "mark " + cls);
      c.title = title;
      top.querySelector(".meta").before(c);
    };
    if (m.includes("retired")) badge("retired", "Retired: out of recall and search", "retired");
    else if (m.includes("wrong") || m.includes("outdated")) badge("needs review", "Reported " + m.join(" and ") + " by feedback: open it to rewrite, review or retire", "needs-review");
  }

  function drawCount() {
    const n = state.total;
    $("#count").textContent = n === null ? "" : n.toLocaleString("en") + (n === 1 ? " memory" : " memories") + (state.items.length < n ? " · showing " + state.items.length.toLocaleString("en") : "");
    $("#bulk-delete").disabled = !n;
  }

  function appendItems(items) {
    const frag = document.createDocumentFragment();
    const base = state.items.length;
    items.forEach((it, i) => frag.append(rowOf(it, base + i)));
    state.items.push(...items);
    list.append(frag);
    $("#more").hidden = !state.cursor;
    if (state.items.length === 0) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = filterParams().toString() ? "No memory matches these filters." : "No memories yet.";
      list.append(li);
    }
    drawCount();
    hook.drawnAt = performance.now();
    hook.renders++;
  }

  /** Loads the first page for the current filters; a newer call wins over an older one still in flight. */
  async function reload() {
    const mine = ++state.seq;
    hook.idle = false;
    const params = filterParams();
    syncUrl(params);
    params.set("limit", "50");
    const res = await memsvc.api("/memories/list?" + params);
    if (mine !== state.seq) return;
    if (!res.ok) {
      showStatus(await errorText(res));
      hook.lastError = res.status;
      hook.renders++;
      hook.idle = true;
      return;
    }
    showStatus("");
    const body = await res.json();
    if (mine !== state.seq) return;
    state.items = [];
    state.selected = -1;
    state.cursor = body.next_cursor;
    state.total = body.total;
    list.replaceChildren();
    // The pane scrolls, not the list inside it: a new filter starts at the top.
    $("#list-pane").scrollTop = 0;
    appendItems(body.items);
    hook.idle = true;
  }

  async function loadMore() {
    if (!state.cursor || state.loading) return;
    state.loading = true;
    const mine = state.seq;
    const params = filterParams();
    params.set("cursor", state.cursor);
    params.set("limit", "50");
    try {
      const res = await memsvc.api("/memories/list?" + params);
      if (mine !== state.seq) return;
      if (!res.ok) return showStatus(await errorText(res));
      const body = await res.json();
      state.cursor = body.next_cursor;
      appendItems(body.items);
    } finally {
      state.loading = false;
    }
  }

  // Filters live in the address bar (never the token), so a view can be bookmarked and shared.
  function syncUrl(params) {
    const qs = params.toString();
    const url = location.pathname + (qs ? "?" + qs : "") + (state.openId ? "#" + state.openId : "");
    history.replaceState(null, "", url);
  }

  function select(index, scroll) {
    const rows = list.querySelectorAll("li[data-index]");
    if (rows.length === 0) return;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (state.selected >= 0 && rows[state.selected]) rows[state.selected].removeAttribute("aria-selected");
    state.selected = index;
    rows[index].setAttribute("aria-selected", "true");
    list.setAttribute("aria-activedescendant", rows[index].id);
    if (scroll !== false) rows[index].scrollIntoView({ block: "nearest" });
    if (index >= rows.length - 5) loadMore();
  }

  // ---- detail ----
  // Markdown (marked + DOMPurify, ~60 KB of script) is only needed by the detail
  // view: loaded once the first page is drawn, so parsing it never delays the list.
  let markdownLoading = null;
  function loadMarkdown() {
    if (window.memsvcMarkdown) return Promise.resolve();
    if (!markdownLoading) {
      markdownLoading = Promise.all(
        ["/assets/vendor/marked.js", "/assets/vendor/purify.js", "/assets/markdown.js"].map(
          (src) =>
            new Promise((resolve, reject) => {
              const el = document.createElement("script");
              el.src = src;
              el.async = false; // executed in this order
              el.onload = resolve;
              el.onerror = () => reject(new Error("could not load " + src));
              document.head.appendChild(el);
            }),
        ),
      );
    }
    return markdownLoading;
  }

  /**
   * Shows one memory. The answer is drawn only if no other open or a close
   * came after this call: Escape pressed while it loads keeps the detail
   * closed, and a slow answer never replaces a newer one.
   */
  async function openDetail(id) {
    const mine = ++state.detailSeq;
    state.detailPending = true;
    const stale = () => {
      if (mine === state.detailSeq) return false;
      hook.detailsDropped++;
      return true;
    };
    try {
      await loadMarkdown();
    } catch (e) {
      markdownLoading = null;
      if (stale()) return;
      state.detailPending = false;
      return showStatus(e.message);
    }
    if (stale()) return;
    const res = await memsvc.api("/memories/detail?id=" + encodeURIComponent(id));
    if (stale()) return;
    if (!res.ok) {
      state.detailPending = false;
      showStatus(await errorText(res));
      return;
    }
    const d = await res.json();
    if (stale()) return;
    state.detailPending = false;
    state.openId = d.memory.id;
    state.openDetail = d;
    drawDetail(d);
    syncUrl(filterParams());
    hook.detailAt = performance.now();
    hook.details++;
  }

  function fact(dl, label, value) {
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value === undefined || value === null || value === "" ? "—" : String(value);
    dl.append(dt, dd);
  }

  function drawDetail(d) {
    const m = d.memory;
    detail.hidden = false;
    document.body.classList.add("detail-open");
    $("#edit-form").hidden = true;
    $("#content").hidden = false;
    detail.querySelector(".short-id").textContent = m.short_id;
    const tc = detail.querySelector(".type-chip");
    tc.replaceChildren(chip(m.memory_type, memsvcColors.type(m.memory_type), "type"), chip(d.domain, memsvcColors.domain(d.domain), "domain"));
    memsvcMarkdown.into($("#content"), m.content);
    $("#citation").textContent = d.citation;
    $("#copied").textContent = "";
    const dl = $("#facts");
    dl.replaceChildren();
    fact(dl, "Project", m.project);
    fact(dl, "Agent", m.source_agent);
    fact(dl, "Agent id", m.source_agent_id);
    fact(dl, "Domain", d.domain);
    fact(dl, "Session", m.source_session);
    fact(dl, "Created", fmtTime(m.created_at));
    fact(dl, "Updated", fmtTime(m.updated_at));
    fact(dl, "Strength", m.effective_strength.toFixed(3) + " effective · " + m.strength.toFixed(3) + " stored");
    fact(dl, "Shown", m.shown_count + "× · last " + fmtTime(m.last_shown_at));
    fact(dl, "Used", m.used_count + "× · last " + fmtTime(m.last_used_at));
    fact(dl, "Id", m.id);
    drawReview(d);
    const tags = $("#tags");
    tags.replaceChildren(...(d.tags.length ? d.tags.map((t) => chip(t.tag + " " + t.weight.toFixed(2), memsvcColors.domain(t.tag), "domain")) : [document.createTextNode("none")]));
    const links = $("#links");
    links.replaceChildren();
    if (d.links.length === 0) links.append(Object.assign(document.createElement("li"), { textContent: "none", className: "none" }));
    for (const l of d.links) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = "#" + l.id;
      a.dataset.id = l.id;
      a.textContent = l.short_id;
      const rel = document.createElement("span");
      rel.className = "rel";
      rel.textContent = (l.direction === "out" ? "→ " : "← ") + l.relationship + " · " + l.weight.toFixed(2);
      const pv = document.createElement("span");
      pv.className = "link-preview";
      pv.textContent = l.preview;
      li.append(a, rel, chip(l.memory_type, memsvcColors.type(l.memory_type), "type"), pv);
      links.append(li);
    }
    detail.scrollTop = 0;
  }

  /** Feedback in force (wrong: out of recall; outdated; retired) with the ways to settle it. */
  function drawReview(d) {
    const box = $("#review");
    const f = d.feedback || {};
    box.replaceChildren();
    const say = (text) => box.append(Object.assign(document.createElement("span"), { textContent: text }));
    const act = (label, run) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.onclick = run;
      box.append(b);
    };
    if (f.wrong) say("Marked wrong " + fmtTime(f.wrong.at) + (f.wrong.note ? ": " + f.wrong.note : "") + ". Out of recall until it is rewritten (Edit) or reviewed.");
    if (f.outdated) say("Reported outdated " + fmtTime(f.outdated.at) + (f.outdated.note ? ": " + f.outdated.note : "") + ".");
    if (f.retired) say("Retired " + fmtTime(f.retired.at) + ": out of recall and search.");
    if (f.wrong || f.outdated) act("Review done: it is right", () => review(d.memory.id, "review"));
    if (f.retired) act("Unretire", () => review(d.memory.id, "unretire"));
    box.hidden = !(f.wrong || f.outdated || f.retired);
    const marks = ["wrong", "outdated", "retired"].filter((k) => f[k]);
    const item = state.items.find((it) => it.id === d.memory.id);
    const row = document.getElementById("m-" + d.memory.id);
    if (item) item.marks = marks.length ? marks : undefined;
    if (row) drawMarks(row.querySelector(".row-top"), marks);
    const retire = $('#feedback button[data-action="retire"]');
    retire.hidden = !!f.retired;
    $("#feedback-status").textContent = "";
  }

  async function review(id, action) {
    const res = await memsvc.api("/memory/review", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, action }) });
    if (!res.ok) return showStatus(await errorText(res));
    hook.feedback = (hook.feedback || 0) + 1;
    await openDetail(id);
  }

  async function feedback(kind) {
    const id = state.openId;
    if (!id) return;
    let note = null;
    if (kind === "wrong" || kind === "outdated") {
      note = window.prompt(kind === "wrong" ? "What is wrong with it? (optional)" : "What changed? (optional)", "");
      if (note === null) return;
    }
    const res = await memsvc.api("/feedback", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, kind, note: note || null }) });
    if (!res.ok) {
      $("#feedback-status").textContent = await errorText(res);
      return;
    }
    const out = await res.json();
    hook.feedback = (hook.feedback || 0) + 1;
    await openDetail(id);
    $("#feedback-status").textContent = out.effect;
  }

  for (const b of document.querySelectorAll("#feedback button[data-kind]")) b.addEventListener("click", () => feedback(b.dataset.kind));
  $('#feedback button[data-action="retire"]').addEventListener("click", () => state.openId && review(state.openId, "retire"));

  function closeDetail() {
    // A detail still loading is cancelled too: it must not appear after the user closed it.
    const cancelled = state.detailPending;
    state.detailSeq++;
    state.detailPending = false;
    if (detail.hidden) return cancelled;
    detail.hidden = true;
    document.body.classList.remove("detail-open");
    state.openId = null;
    state.openDetail = null;
    syncUrl(filterParams());
    list.focus();
    return true;
  }

  function confirmDialog(title, text, okLabel) {
    return new Promise((resolve) => {
      const dlg = $("#confirm");
      $("#confirm-title").textContent = title;
      $("#confirm-text").textContent = text;
      $("#confirm-ok").textContent = okLabel;
      let answer = false;
      $("#confirm-cancel").onclick = () => dlg.close();
      dlg.querySelector("form").onsubmit = (e) => {
        e.preventDefault();
        answer = true;
        dlg.close();
      };
      dlg.onclose = () => resolve(answer);
      dlg.showModal();
      $("#confirm-cancel").focus();
    });
  }

  async function copyCitation() {
    const text = $("#citation").textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch (_) {
      // No clipboard permission (plain http from another host): select it for Ctrl+C instead.
      const r = document.createRange();
      r.selectNodeContents($("#citation"));
      const sel = getSelection();
      sel.removeAllRanges();
      sel.addRange(r);
      $("#copied").textContent = "selected: press Ctrl+C";
      return;
    }
    $("#copied").textContent = "copied";
  }

  function startEdit() {
    const m = state.openDetail && state.openDetail.memory;
    if (!m) return;
    const f = $("#edit-form");
    f.elements.content.value = m.content;
    f.elements.project.value = m.project || "";
    f.elements.memory_type.value = m.memory_type;
    $("#edit-status").textContent = "";
    f.hidden = false;
    $("#content").hidden = true;
    f.elements.content.focus();
  }

  async function saveEdit(e) {
    e.preventDefault();
    const m = state.openDetail.memory;
    const f = $("#edit-form");
    const body = { id: m.id };
    if (f.elements.content.value.trim() !== m.content) body.content = f.elements.content.value;
    const project = f.elements.project.value.trim();
    if (project !== (m.project || "")) body.project = project === "" ? null : project;
    if (f.elements.memory_type.value !== m.memory_type) body.memory_type = f.elements.memory_type.value;
    if (Object.keys(body).length === 1) {
      $("#edit-status").textContent = "nothing changed";
      return;
    }
    $("#save").disabled = true;
    $("#edit-status").textContent = "saving…";
    try {
      const res = await memsvc.api("/memory", { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (!res.ok) {
        $("#edit-status").textContent = await errorText(res);
        return;
      }
      await openDetail(m.id);
      await reload();
    } finally {
      $("#save").disabled = false;
    }
  }

  async function deleteOpen() {
    const m = state.openDetail && state.openDetail.memory;
    if (!m) return;
    const ok = await confirmDialog("Delete memory " + m.short_id + "?", "It is removed with its links and cannot be restored. " + m.content.slice(0, 140), "Delete");
    if (!ok) return;
    const res = await memsvc.api("/memory?id=" + encodeURIComponent(m.id), { method: "DELETE" });
    if (!res.ok) return showStatus(await errorText(res));
    closeDetail();
    await reload();
  }

  async function bulkDelete() {
    const params = filterParams();
    params.delete("sort");
    const res = await memsvc.api("/memories/count?" + params);
    if (!res.ok) return showStatus(await errorText(res));
    const { count } = await res.json();
    if (count === 0) return showStatus("Nothing to delete: no memory matches these filters.");
    const named = [...params].map(([k, v]) => (k === "query" ? `search "${v}"` : `${k.replace("_", " ")} ${v}`)).join(", ");
    const described = named ? "every memory matching " + named : "EVERY memory in this store (no filter is set)";
    const ok = await confirmDialog("Delete " + count.toLocaleString("en") + " memories?", "This deletes " + described + ", with their links. It cannot be undone.", "Delete " + count.toLocaleString("en"));
    if (!ok) return;
    const body = { confirm_count: count };
    for (const [k, v] of params) body[k] = k === "min_strength" ? Number(v) : v;
    const del = await memsvc.api("/memories/delete", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!del.ok) return showStatus(await errorText(del));
    const out = await del.json();
    closeDetail();
    await reload();
    showStatus("Deleted " + out.deleted.toLocaleString("en") + " memories.");
  }

  async function loadFacets() {
    const res = await memsvc.api("/memories/facets");
    if (!res.ok) return;
    const f = await res.json();
    const fill = (id, rows) => $(id).replaceChildren(...rows.map((r) => Object.assign(document.createElement("option"), { value: r.name, label: r.name + " (" + r.count + ")" })));
    fill("#project-list", f.projects);
    fill("#domain-list", f.domains);
  }

  // ---- events ----
  let debounce = 0;
  form.addEventListener("input", (e) => {
    clearTimeout(debounce);
    hook.idle = false;
    // Typing in the search box waits for a pause; a select or date applies at once.
    debounce = setTimeout(reload, e.target.id === "q" || e.target.type === "number" ? 250 : 0);
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    clearTimeout(debounce);
    reload();
  });
  $("#clear").addEventListener("click", () => {
    for (const el of form.elements) if (el.name) el.value = "";
    reload();
  });
  $("#more").addEventListener("click", loadMore);
  $("#list-pane").addEventListener("scroll", () => {
    const pane = $("#list-pane");
    if (pane.scrollTop + pane.clientHeight > pane.scrollHeight - 400) loadMore();
  });
  list.addEventListener("click", (e) => {
    const li = e.target.closest("li[data-index]");
    if (!li) return;
    select(Number(li.dataset.index), false);
    openDetail(state.items[Number(li.dataset.index)].id);
  });
  $("#links").addEventListener("click", (e) => {
    const a = e.target.closest("a[data-id]");
    if (!a) return;
    e.preventDefault();
    openDetail(a.dataset.id);
  });
  $("#close").addEventListener("click", closeDetail);
  $("#copy").addEventListener("click", copyCitation);
  $("#edit").addEventListener("click", startEdit);
  $("#cancel-edit").addEventListener("click", () => {
    $("#edit-form").hidden = true;
    $("#content").hidden = false;
  });
  $("#edit-form").addEventListener("submit", saveEdit);
  $("#delete").addEventListener("click", deleteOpen);
  $("#bulk-delete").addEventListener("click", bulkDelete);

  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return;
    const t = e.target;
    const typing = t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
    if (e.key === "/" && !typing) {
      e.preventDefault();
      $("#q").focus();
      $("#q").select();
      return;
    }
    if (e.key === "Escape") {
      if (closeDetail()) e.preventDefault();
      else if (typing) t.blur();
      return;
    }
    if (typing && t.id !== "q") return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (t.id === "q") list.focus();
      select(state.selected < 0 ? 0 : state.selected + (e.key === "ArrowDown" ? 1 : -1));
    } else if (e.key === "Enter" && !typing && state.selected >= 0 && state.items[state.selected]) {
      e.preventDefault();
      openDetail(state.items[state.selected].id);
    }
  });

  // Filters from the address bar (a bookmarked or shared view), then the first page.
  const initial = new URLSearchParams(location.search);
  const initialId = location.hash.slice(1);
  for (const el of form.elements) if (el.name && initial.has(el.name)) el.value = initial.get(el.name);
  // Filters that came with the address are shown, not hidden behind the fold.
  if ([...initial.keys()].some((k) => k !== "query" && k !== "sort")) $("#more-filters").open = true;
  // The suggestions wait for the first page: the server answers one request at a time per core.
  reload().then(() => {
    if (/^[0-9a-f-]{8,36}$/.test(initialId)) openDetail(initialId);
    loadFacets();
    loadMarkdown().catch(() => {});
  });
})();
