// The dashboard: read-only but for one action, Retire on a memory shown
// often and never used (POST /memory/review). Every other request is a GET of
// /dashboard/data through window.memsvc.api (auth.js), which adds the bearer
// token when one is needed. Charts are drawn by Chart.js, served by this server at
// /dashboard/vendor/chart.js. What each chart was drawn with is kept on
// window.__dashboard, so tests can compare it with the data.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const charts = {};
  const state = { data: null, charts: {}, headline: null, renders: 0, error: null };
  window.__dashboard = state;

  const DAYS = ["7", "30", "90", "365"];
  // Colours shared with every page (assets/shared/colors.js): stable per name, not per rank.
  const COLORS = window.memsvcColors;
  const DAY_MS = 86400000;
  const num = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "—");
  const pct = (share) => (typeof share === "number" ? `${(share * 100).toFixed(1)}%` : "—");
  const shortDay = (day) => (typeof day === "string" ? day.slice(5) : day);

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function showError(message) {
    state.error = message;
    const el = $("status");
    el.textContent = message;
    el.hidden = !message;
  }

  function initialDays() {
    const d = new URL(window.location.href).searchParams.get("days");
    return DAYS.includes(d) ? d : "30";
  }

  async function load() {
    const days = $("days").value;
    $("meta").textContent = "Loading…";
    try {
      const res = await window.memsvc.api(`/dashboard/data?days=${encodeURIComponent(days)}`);
      const body = await res.json().catch(() => null);
      if (!res.ok) {
        const why = body && body.error ? body.error.message : `HTTP ${res.status}`;
        showError(`Could not load the dashboard data: ${why}`);
        $("meta").textContent = "";
        return;
      }
      showError("");
      render(body);
    } catch (e) {
      showError(`Could not reach the server: ${e && e.message ? e.message : e}`);
      $("meta").textContent = "";
    }
  }

  function snapshot(chart) {
    return {
      type: chart.config.type,
      labels: chart.data.labels.slice(),
      datasets: chart.data.datasets.map((d) => ({ label: d.label, data: d.data.slice() })),
    };
  }

  function draw(name, canvasId, config) {
    if (charts[name]) charts[name].destroy();
    const chart = new window.Chart($(canvasId), config);
    charts[name] = chart;
    state.charts[name] = snapshot(chart);
  }

  function baseOptions(extra) {
    return Object.assign(
      {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "index", intersect: false },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      },
      extra,
    );
  }

  function dayScale(extra) {
    return Object.assign({ ticks: { callback(v) { return shortDay(this.getLabelForValue(v)); }, maxRotation: 0, autoSkipPadding: 8 }, grid: { display: false } }, extra);
  }

  function renderHeader(d) {
    const a = d.account || {};
    $("account-name").textContent = a.name || "";
    $("account-org").textContent = a.org || "";
    $("account-plan").textContent = a.plan || "";
    $("account-plan").hidden = !a.plan;
    $("account").hidden = !(a.name || a.org || a.plan);
    const when = new Date(d.generated_at);
    const scope = Array.isArray(d.scope) ? ` · project${d.scope.length === 1 ? "" : "s"} ${d.scope.join(", ")}` : "";
    $("meta").textContent = `${d.window.from} – ${d.window.to} (UTC)${scope} · updated ${when.toLocaleTimeString("en-GB")}`;
  }

  /** The headline and the growth tiles follow the selected period (the recall and growth series cover exactly it). */
  function renderHeadline(d) {
    const r = d.recall;
    const showings = r.days.reduce((a, x) => a + (x.showings || 0), 0);
    const uses = r.days.reduce((a, x) => a + (x.uses || 0), 0);
    const period = `the last ${d.window.days} days`;
    state.headline = showings === 0 ? "—" : (uses / showings).toLocaleString("en-US", { maximumFractionDigits: 3 });
    $("headline").textContent = state.headline;
    $("headline-sub").textContent =
      r.showings === 0 ? "No memory has been shown yet" : showings === 0 ? `No memory shown in ${period}` : `${num(uses)} uses / ${num(showings)} showings in ${period}`;
    const added = (type) => d.growth.days.reduce((a, x) => a + (type ? x.by_type[type] || 0 : Object.values(x.by_type).reduce((b, v) => b + v, 0)), 0);
    $("kpi-memories").textContent = num(d.counts.memories);
    $("kpi-memories-added").textContent = `+${num(added(null))} in ${d.window.days} days`;
    $("kpi-learnings").textContent = num(d.counts.learnings);
    $("kpi-learnings-added").textContent = `+${num(added("learnings"))} in ${d.window.days} days`;
    $("kpi-links").textContent = num(d.counts.links);
    $("kpi-domains").textContent = num(d.counts.domains);
    $("kpi-never-shown").textContent = pct(r.never_shown_share);
    $("kpi-never-shown").title = `${num(r.never_shown)} of ${num(d.counts.memories)} memories`;
    $("kpi-never-used").textContent = pct(r.never_used_share);
    $("kpi-never-used").title = `${num(r.never_used)} of ${num(d.counts.memories)} memories`;
  }

  function renderRecall(d) {
    const days = d.recall.days;
    draw("recall", "chart-recall", {
      type: "bar",
      data: {
        labels: days.map((x) => x.day),
        datasets: [
          { label: "Showings", data: days.map((x) => x.showings), backgroundColor: "#4e79a7", yAxisID: "y" },
          { label: "Uses", data: days.map((x) => x.uses), backgroundColor: "#f28e2b", yAxisID: "y" },
          { type: "line", label: "Uses per showing", data: days.map((x) => x.uses_per_showing), borderColor: css("--accent"), backgroundColor: css("--accent"), yAxisID: "ratio", spanGaps: false, pointRadius: 3 },
        ],
      },
      options: baseOptions({
        scales: {
          x: dayScale(),
          y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "count" } },
          ratio: { position: "right", beginAtZero: true, grid: { display: false }, title: { display: true, text: "uses / showing" } },
        },
      }),
    });
  }

  function renderGrowth(d) {
    const g = d.growth;
    const types = g.types.filter((t) => t in COLORS.TYPES || g.days.some((x) => x.by_type[t] > 0));
    draw("growth", "chart-growth", {
      type: "bar",
      data: {
        labels: g.days.map((x) => x.day),
        datasets: [
          ...types.map((t) => ({ label: t, data: g.days.map((x) => x.by_type[t] || 0), backgroundColor: COLORS.type(t), stack: "added", yAxisID: "y" })),
          { type: "line", label: "Total", data: g.days.map((x) => x.total), borderColor: css("--fg"), backgroundColor: css("--fg"), yAxisID: "total", pointRadius: 0, borderWidth: 2 },
        ],
      },
      options: baseOptions({
        scales: {
          x: dayScale({ stacked: true }),
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "added" } },
          total: { position: "right", beginAtZero: true, ticks: { precision: 0 }, grid: { display: false }, title: { display: true, text: "total" } },
        },
      }),
    });
  }

  function renderDomains(d) {
    const c = d.domains;
    const labels = c.top.map((x) => x.domain);
    const data = c.top.map((x) => x.memories);
    if (c.other.memories > 0) {
      labels.push(`other (${c.other.domains} domain${c.other.domains === 1 ? "" : "s"})`);
      data.push(c.other.memories);
    }
    draw("domains", "chart-domains", {
      type: "doughnut",
      data: { labels, datasets: [{ label: "Memories", data, backgroundColor: c.top.map((x) => COLORS.domain(x.domain)).concat(c.other.memories > 0 ? ["#9aa3ad"] : []), borderColor: css("--panel"), borderWidth: 2 }] },
      options: baseOptions({ interaction: { mode: "nearest", intersect: true }, plugins: { legend: { position: "right", labels: { boxWidth: 12 } } } }),
    });
  }

  function renderReach(d) {
    const r = d.recall;
    const total = d.counts.memories;
    draw("reach", "chart-reach", {
      type: "bar",
      data: {
        labels: ["Shown", "Used"],
        datasets: [
          { label: "at least once", data: [total - r.never_shown, total - r.never_used], backgroundColor: "#59a14f" },
          { label: "never", data: [r.never_shown, r.never_used], backgroundColor: "#bab0ac" },
        ],
      },
      options: baseOptions({
        indexAxis: "y",
        interaction: { mode: "index", intersect: false },
        scales: { x: { stacked: true, beginAtZero: true, max: Math.max(total, 1), title: { display: true, text: "memories" } }, y: { stacked: true, grid: { display: false } } },
        plugins: {
          legend: { position: "bottom", labels: { boxWidth: 12 } },
          tooltip: { callbacks: { label: (ctx) => `${ctx.dataset.label}: ${num(ctx.parsed.x)} (${pct(total ? ctx.parsed.x / total : null)})` } },
        },
      }),
    });
  }

  function renderNightly(d) {
    // A project-scoped token gets no digests (a run is store-wide): no card.
    const card = $("chart-nightly").closest("figure");
    card.hidden = !Array.isArray(d.nightly);
    if (card.hidden) return;
    const val = (r, k) => (r && typeof r[k] === "number" ? r[k] : 0);
    // The axis is the calendar, oldest day left: a forced re-run of an older
    // day sits on that day, and a day without a run shows as a gap. The list
    // is newest run first, so the first run seen for a day is its latest.
    const byDay = new Map();
    for (const r of d.nightly) if (typeof r.day === "string" && !byDay.has(r.day)) byDay.set(r.day, r);
    const days = [];
    const known = [...byDay.keys()].sort();
    if (known.length) for (let t = Date.parse(known[0] + "T00:00:00Z"), end = Date.parse(known[known.length - 1] + "T00:00:00Z"); t <= end; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
    const series = (k) => days.map((day) => val(byDay.get(day), k));
    draw("nightly", "chart-nightly", {
      type: "bar",
      data: {
        labels: days,
        datasets: [
          { label: "Learnings written", data: series("written"), backgroundColor: COLORS.type("learnings") },
          { label: "Merged", data: series("merged"), backgroundColor: "#76b7b2" },
          { label: "Pruned", data: series("dropped"), backgroundColor: "#e15759" },
          { label: "Decayed", data: series("decayed"), backgroundColor: "#edc948" },
        ],
      },
      options: baseOptions({ scales: { x: dayScale(), y: { beginAtZero: true, ticks: { precision: 0 } } } }),
    });
    const body = $("nightly-table").querySelector("tbody");
    body.replaceChildren(
      ...d.nightly.map((r) => {
        const tr = document.createElement("tr");
        const notes = [
          ...(Array.isArray(r.skipped) ? r.skipped.map((x) => `skipped ${x.step}: ${x.reason}`) : []),
          ...(Array.isArray(r.errors) ? r.errors : []),
        ].join("; ");
        // A run that skipped its learn step did not do its main work: "done" would hide that.
        const learnSkipped = Array.isArray(r.skipped) && r.skipped.some((x) => x && x.step === "learn");
        const status = learnSkipped && r.status === "done" ? "done, learn skipped" : r.status;
        const cells = [
          [r.day, ""],
          [status, learnSkipped ? "warn" : ""],
          [`${val(r, "read")}/${val(r, "considered")}`, "num"],
          [num(val(r, "written")), "num"],
          [num(val(r, "merged")), "num"],
          [num(val(r, "dropped")), "num"],
          [num(val(r, "decayed")), "num"],
          [`${val(r, "model_calls")}/${val(r, "max_model_calls")}`, "num"],
          [notes, "notes"],
        ];
        for (const [text, cls] of cells) {
          const td = document.createElement("td");
          td.textContent = String(text ?? "");
          if (cls) td.className = cls;
          tr.appendChild(td);
        }
        return tr;
      }),
    );
    $("nightly-table").hidden = d.nightly.length === 0;
    $("nightly-empty").hidden = d.nightly.length > 0;
  }

  // Sessions whose capture waits (no model, model failing, no server): the store cannot grow until that is fixed.
  function renderBacklog(d) {
    const b = d.backlog;
    const el = $("backlog");
    if (!b || !b.total) {
      el.hidden = true;
      return;
    }
    const sessions = (n) => `${num(n)} session${n === 1 ? "" : "s"}`;
    const wait = (n) => (n === 1 ? "waits" : "wait");
    const parts = [];
    if (b.noModel) parts.push(`${sessions(b.noModel)} ${wait(b.noModel)} for a language model (configure one: memsvc setup --llm …)`);
    if (b.modelFailed) parts.push(`${sessions(b.modelFailed)} ${wait(b.modelFailed)} for the language model to answer again`);
    if (b.noServer) parts.push(`${sessions(b.noServer)} found no server when captured`);
    el.textContent = `${parts.join("; ")}. They are kept and distilled when that is fixed.`;
    el.hidden = false;
  }

  function renderTokens(d) {
    const r = d.receipts;
    draw("tokens", "chart-tokens", {
      type: "bar",
      data: {
        labels: r.days.map((x) => x.date),
        datasets: [
          { label: "Tokens injected", data: r.days.map((x) => x.tokens), backgroundColor: "#76b7b2", yAxisID: "y" },
          { type: "line", label: "Share used", data: r.days.map((x) => (x.injected ? x.used / x.injected : null)), borderColor: css("--accent"), backgroundColor: css("--accent"), yAxisID: "share", spanGaps: false, pointRadius: 3 },
        ],
      },
      options: baseOptions({
        scales: {
          x: dayScale(),
          y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "tokens" } },
          share: { position: "right", beginAtZero: true, max: 1, grid: { display: false }, title: { display: true, text: "used / injected" } },
        },
      }),
    });
    $("tokens-summary").textContent = r.injected
      ? `${num(r.tokens)} tokens, ${num(r.injected)} memories injected, ${num(r.used)} used (${pct(r.used_share)}) in the last ${d.window.days} days`
      : `Nothing injected in the last ${d.window.days} days`;
  }

  function renderRetire(d) {
    const r = d.receipts;
    const f = r.feedback;
    $("feedback-counts").textContent = `Feedback in the period: ${num(f.wrong)} wrong, ${num(f.outdated)} outdated, ${num(f.irrelevant)} irrelevant, ${num(f.useful)} useful, ${num(f.retired)} retired`;
    const body = $("retire-table").querySelector("tbody");
    body.replaceChildren();
    for (const m of r.shown_never_used) {
      const tr = document.createElement("tr");
      tr.dataset.id = m.id;
      const what = document.createElement("td");
      const a = document.createElement("a");
      a.href = "/memories#" + m.id;
      a.textContent = m.short_id;
      what.append(a, document.createTextNode(" " + m.gist));
      const shown = document.createElement("td");
      shown.className = "num";
      shown.textContent = num(m.shown_count);
      const act = document.createElement("td");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "retire";
      b.textContent = "Retire";
      b.title = "Out of recall and search, kept with its history (unretire in the memory browser)";
      b.onclick = () => retire(m.id, b);
      act.append(b);
      tr.append(what, shown, act);
      body.append(tr);
    }
    $("retire-empty").hidden = r.shown_never_used.length > 0;
  }

  async function retire(id, button) {
    button.disabled = true;
    const res = await window.memsvc.api("/memory/review", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, action: "retire" }) });
    if (!res.ok) {
      button.disabled = false;
      const body = await res.json().catch(() => null);
      showError(`Could not retire it: ${body && body.error ? body.error.message : `HTTP ${res.status}`}`);
      return;
    }
    button.textContent = "Retired";
    state.retired = (state.retired || 0) + 1;
  }

  function render(d) {
    if (!d) return;
    renderBacklog(d);
    state.data = d;
    const Chart = window.Chart;
    Chart.defaults.color = css("--muted");
    Chart.defaults.borderColor = css("--line");
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    renderHeader(d);
    renderHeadline(d);
    renderRecall(d);
    renderGrowth(d);
    renderDomains(d);
    renderReach(d);
    renderNightly(d);
    renderTokens(d);
    renderRetire(d);
    state.renders++;
  }

  $("days").value = initialDays();
  $("days").addEventListener("change", () => {
    const url = new URL(window.location.href);
    url.searchParams.set("days", $("days").value);
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    void load();
  });
  $("refresh").addEventListener("click", () => void load());
  // Chart colours come from the page's CSS variables: redraw when the scheme flips.
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => render(state.data));
  if (!window.Chart) showError("The chart library did not load (/dashboard/vendor/chart.js).");
  else void load();
})();
