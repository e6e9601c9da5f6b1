// The sessions page: sessions newest first (GET /recall/sessions); one
// session's prompts with the memories each received, the near misses, which
// ones the agent then used and the tokens (GET /recall/receipts); feedback on
// a memory right where it was shown (POST /feedback).
(function () {
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const state = { next: null, open: null };
  const hook = (window.__sessionsPage = { sessions: 0, prompts: 0, feedback: 0 });

  const when = (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const num = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(3).replace(/0+$/, "").replace(/\.$/, ""));
  const PARTS = [["full_text", "full text"], ["vector", "vector"], ["graph", "graph"], ["topic", "topic"], ["strength", "strength"], ["recency", "recency"], ["stale", "stale"], ["feedback", "feedback"]];
  function partsText(p) {
    return PARTS.filter(([k]) => p[k] !== null && p[k] !== undefined && !((k === "stale" || k === "feedback") && p[k] === 1) && !(k === "topic" && p[k] === 0))
      .map(([k, label]) => label + " " + num(p[k]))
      .join(" · ");
  }

  async function errorText(res) {
    try { return (await res.json()).error.message; } catch (_) { return "HTTP " + res.status; }
  }
  function showStatus(text) {
    const s = $("#status");
    s.textContent = text;
    s.hidden = !text;
  }

  async function loadSessions(more) {
    const res = await memsvc.api("/recall/sessions?limit=50" + (more && state.next ? "&before=" + encodeURIComponent(state.next) : ""));
    if (!res.ok) return showStatus(await errorText(res));
    const body = await res.json();
    state.next = body.next;
    const list = $("#sessions");
    if (!more) list.replaceChildren();
    if (!more && body.sessions.length === 0) list.append(el("li", "empty", "No sessions yet: prompts recalled through the hooks appear here."));
    for (const x of body.sessions) {
      const li = el("li");
      li.dataset.session = x.session_id;
      li.tabIndex = 0;
      li.append(el("div", "sid", x.session_id));
      const who = [x.agent, x.project].filter(Boolean).join(" · ");
      li.append(el("div", "meta", (who ? who + " · " : "") + when(x.last_at)));
      li.append(el("div", "meta", x.prompts + " prompt" + (x.prompts === 1 ? "" : "s") + " · " + x.tokens + " tokens · " + x.injected + " injected · " + x.used + " used"));
      li.onclick = () => openSession(x);
      li.onkeydown = (e) => { if (e.key === "Enter") openSession(x); };
      list.append(li);
    }
    $("#more").hidden = !state.next;
    hook.sessions = list.querySelectorAll("li[data-session]").length;
  }

  function memoryRow(m, receipt, kind) {
    const row = el("div", "mem");
    row.dataset.id = m.id;
    const head = el("div", "head");
    const a = el("a", "", m.short_id);
    a.href = "/memories#" + m.id;
    a.title = "Open in the memory browser";
    head.append(a);
    if (kind === "injected") {
      if (m.used) head.append(el("span", "badge used", "used"));
      if (m.tokens !== undefined) head.append(el("span", "badge", m.tokens + " tokens"));
    } else head.append(el("span", "badge reason", m.reason));
    head.append(el("span", "meta", "score " + num(m.score)));
    row.append(head, el("div", "gist", m.gist), el("div", "parts", partsText(m.parts)));
    if (kind === "injected") {
      const fb = el("div", "feedback");
      for (const k of ["wrong", "outdated", "irrelevant", "useful"]) {
        const b = el("button", "", k);
        b.type = "button";
        b.dataset.kind = k;
        b.onclick = () => sendFeedback(row, fb, m.id, k, receipt.id);
        fb.append(b);
      }
      row.append(fb);
    }
    return row;
  }

  async function sendFeedback(row, box, id, kind, receipt) {
    let note = null;
    if (kind === "wrong" || kind === "outdated") {
      note = window.prompt(kind === "wrong" ? "What is wrong with it? (optional)" : "What changed? (optional)", "");
      if (note === null) return;
    }
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    const res = await memsvc.api("/feedback", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, kind, note: note || null, receipt }) });
    for (const b of box.querySelectorAll("button")) b.disabled = false;
    if (!res.ok) return showStatus(await errorText(res));
    const out = await res.json();
    box.querySelector(".done")?.remove();
    box.append(el("span", "done", kind + ": " + out.effect));
    row.dataset.feedback = kind;
    hook.feedback++;
  }

  async function openSession(x) {
    state.open = x.session_id;
    for (const li of document.querySelectorAll("#sessions li")) li.setAttribute("aria-selected", String(li.dataset.session === x.session_id));
    const res = await memsvc.api("/recall/receipts?kind=recall&limit=200&session_id=" + encodeURIComponent(x.session_id));
    if (state.open !== x.session_id) return;
    if (!res.ok) return showStatus(await errorText(res));
    const { receipts } = await res.json();
    $("#prompts-pane").hidden = false;
    document.body.classList.add("session-open");
    $("#session-title").textContent = "Session " + x.session_id;
    const used = receipts.reduce((n, r) => n + r.injected.filter((m) => m.used).length, 0);
    const injected = receipts.reduce((n, r) => n + r.injected.length, 0);
    const tokens = receipts.reduce((n, r) => n + r.tokens, 0);
    $("#session-totals").textContent = receipts.length + " prompts · " + tokens + " tokens injected · " + injected + " memories injected, " + used + " used" + (x.agent ? " · " + x.agent : "");
    const list = $("#prompts");
    list.replaceChildren();
    // Oldest first: the session as it went.
    for (const r of receipts.slice().reverse()) {
      const li = el("li", "prompt");
      li.dataset.receipt = r.id;
      li.append(el("div", "meta", "Turn " + (r.turn ?? "–") + " · " + when(r.at) + " · " + r.tokens + " tokens" + (r.budget ? " of " + r.budget : "")));
      li.append(el("div", "text", r.prompt ?? "(only the prompt's hash is kept)"));
      li.append(el("h4", "", r.injected.length ? "Injected" : "Nothing injected"));
      for (const m of r.injected) li.append(memoryRow(m, r, "injected"));
      if (r.dropped.length) {
        li.append(el("h4", "", "Near misses"));
        for (const d of r.dropped) li.append(memoryRow(d, r, "dropped"));
      }
      list.append(li);
    }
    hook.prompts = receipts.length;
    $("#prompts-pane").scrollTop = 0;
  }

  $("#more").onclick = () => loadSessions(true);
  $("#back").onclick = () => {
    document.body.classList.remove("session-open");
    $("#prompts-pane").hidden = true;
  };
  loadSessions(false).catch((e) => showStatus(String(e.message || e)));
})();
