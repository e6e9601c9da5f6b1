// The detail panel of /viz: what the export knows about a memory at once,
// then its full text and relationships from op=neighbors (which, unlike
// GET /memory, does not mark the memory used). Everything is set as text.
(function () {
  "use strict";
  let seq = 0;

  function fact(dl, label, value) {
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.textContent = value;
    dl.append(dt, dd);
  }

  const item = (text) => Object.assign(document.createElement("li"), { textContent: text });

  /** opts: typeColor, shown(id) → node in this view or undefined, focus(node). */
  async function show(box, node, opts) {
    const mine = ++seq;
    box.hidden = false;
    box.dataset.id = node.id;
    box.querySelector(".short-id").textContent = node.short_id;
    const type = box.querySelector(".type");
    type.textContent = node.memory_type;
    type.style.background = opts.typeColor;
    const dl = box.querySelector(".facts");
    dl.replaceChildren();
    fact(dl, "Project", node.project || "—");
    fact(dl, "Domain", node.domain);
    fact(dl, "Tags", node.tags.map((t) => t.tag + " " + t.weight).join(", ") || "—");
    fact(dl, "Created", node.created_at.slice(0, 16).replace("T", " "));
    fact(dl, "Strength", node.effective_strength + " (stored " + node.strength + ")");
    fact(dl, "Links", String(node.connections));
    fact(dl, "From", node.source_agent);
    const content = box.querySelector(".content");
    content.textContent = node.preview;
    const title = box.querySelector(".rel-title");
    title.textContent = "Relationships";
    const list = box.querySelector(".relationships");
    list.replaceChildren(item("Loading…"));
    let body;
    try {
      const res = await window.memsvc.api("/graph?op=neighbors&limit=100&id=" + encodeURIComponent(node.id));
      body = await res.json();
      if (!res.ok) throw new Error(body && body.error ? body.error.message : "HTTP " + res.status);
    } catch (e) {
      if (mine === seq) list.replaceChildren(item("Could not load: " + e.message));
      return;
    }
    if (mine !== seq) return; // a later click won
    content.textContent = body.memory.content;
    title.textContent = "Relationships (" + body.total + (body.total > body.count ? ", strongest " + body.count + " shown" : "") + ")";
    list.replaceChildren();
    if (body.total === 0) list.appendChild(item("No links."));
    for (const n of body.neighbors) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = n.short_id;
      const target = opts.shown(n.id);
      b.disabled = !target;
      b.title = target ? "Focus this memory" : "Not in this view (filtered out or past the limit)";
      b.addEventListener("click", () => target && opts.focus(target));
      const text = document.createElement("span");
      // "→ rel": this memory links to the other one; "← rel": the other one links here.
      text.title = "→ this memory links to it · ← it links to this memory";
      text.textContent = " " + n.relationships.map((r) => (r.direction === "out" ? "→ " : "← ") + r.relationship + " " + r.weight).join(", ") + " · " + n.preview;
      li.append(b, text);
      list.appendChild(li);
    }
  }

  window.memsvcVizDetail = { show };
})();
