// Rendering half of /viz: wraps the 3D (3d-force-graph, WebGL) and 2D
// (force-graph, canvas) libraries behind one small interface. Smoothness at
// thousands of nodes comes from: colours and sizes precomputed as node
// properties (accessors read a field, nothing is allocated per frame), most of
// the layout computed before the first frame (warm-up ticks), a short
// animated cool-down, no node dragging, no text sprites, and no redraw once
// the layout has stopped (2D pauses itself; 3D is paused until the pointer
// moves over it).
(function () {
  "use strict";

  const BACKGROUND = "#0f1419";
  const LINK_3D = "#7d8ea3";
  const LINK_3D_OPACITY = 0.28;
  const LINK_2D = "rgba(125, 142, 163, 0.35)";
  const SELECTED = "#ffffff";
  // 2D labels appear from this zoom on (about 40 px between typical
  // neighbours), where they no longer overlap into a grey smear.
  const LABEL_ZOOM = 2.5;
  const LABEL_CHARS = 28;
  const labelOf = (n) => (n.preview.length > LABEL_CHARS ? n.preview.slice(0, LABEL_CHARS - 1) + "…" : n.preview);

  // Layout budget. The many-body force dominates (Barnes-Hut, n log n per
  // tick). Small graphs are laid out almost entirely before the first frame;
  // big ones get a coarser approximation (theta), a bounded reach, a faster
  // cooling (about 150 ticks instead of 300) and only a short blocking
  // warm-up, so the page answers input while the rest animates.
  function layoutFor(n) {
    if (n <= 1500) return { warmup: Math.min(300, Math.floor(150000 / Math.max(1, n))), cooldown: 80, alphaDecay: 0.0228, theta: 0.9, distanceMax: Infinity };
    return { warmup: Math.max(10, Math.floor(60000 / n)), cooldown: 140, alphaDecay: 0.045, theta: 1.5, distanceMax: 400 };
  }

  function hasWebGL() {
    try {
      const c = document.createElement("canvas");
      return !!(window.WebGLRenderingContext && (c.getContext("webgl2") || c.getContext("webgl")));
    } catch (_) {
      return false;
    }
  }

  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  function tooltip(n) {
    return (
      '<div class="tip"><b>' + escapeHtml(n.short_id) + "</b> · " + escapeHtml(n.memory_type) + " · " + escapeHtml(n.domain) +
      (n.project && n.project !== n.domain ? " (" + escapeHtml(n.project) + ")" : "") +
      " · " + escapeHtml(n.created_at.slice(0, 10)) + "<br>" + escapeHtml(n.preview) + "</div>"
    );
  }

  /**
   * createView(el, mode, handlers) → view. `handlers.onClick(node)`,
   * `handlers.onBackground()`, `handlers.onSettled()`. Throws when the 3D
   * renderer cannot start (the caller falls back to 2D).
   */
  function createView(el, mode, handlers) {
    let selected = null;
    let labelsDrawn = 0;
    let settled = false;
    let graph;
    const width = () => el.clientWidth || window.innerWidth;
    const height = () => el.clientHeight || window.innerHeight;
    // 3D only: one batched line object for all links (see link-batch.js);
    // undefined while unknown, null when the library draws its own links.
    let batch;
    let loaded = false;
    let pending = null;
    let destroyed = false;
    // Bumped by every setData, so a late timer of an older layout changes nothing.
    let generation = 0;
    let fitting = false;
    const FIT_MS = 400;
    const onStop = () => {
      if (!loaded) return; // the 3D probe graph
      if (batch) batch.update();
      if (settled || fitting) return;
      // "Settled" means laid out AND framed: nodes keep still on screen from then on.
      fitting = true;
      const mine = generation;
      graph.zoomToFit(FIT_MS, 40);
      setTimeout(() => {
        fitting = false;
        if (destroyed || mine !== generation) return;
        settled = true;
        handlers.onSettled && handlers.onSettled();
        if (mode === "3d") idleSoon();
      }, FIT_MS + 60);
    };
    if (mode === "3d") {
      if (typeof window.ForceGraph3D !== "function") throw new Error("the 3D library did not load");
      graph = new window.ForceGraph3D(el, { controlType: "trackball", rendererConfig: { antialias: false, alpha: false, powerPreference: "high-performance" } })
        .showNavInfo(false)
        .nodeResolution(6)
        .nodeOpacity(0.92)
        .linkOpacity(LINK_3D_OPACITY)
        .linkWidth(0)
        .linkColor(() => LINK_3D);
      const renderer = graph.renderer();
      if (!renderer || !renderer.getContext()) throw new Error("WebGL context could not be created");
    } else {
      graph = new window.ForceGraph(el)
        .autoPauseRedraw(true)
        .linkColor(() => LINK_2D)
        .linkWidth(0.6)
        .nodeCanvasObjectMode(() => "after")
        .nodeCanvasObject((n, ctx, scale) => {
          const r = 4 * Math.sqrt(n.val);
          if (n === selected) {
            ctx.beginPath();
            ctx.arc(n.x, n.y, r + 2 / scale, 0, 2 * Math.PI);
            ctx.strokeStyle = SELECTED;
            ctx.lineWidth = 2 / scale;
            ctx.stroke();
          }
          // Labels once zoomed in far enough to read them; the selected node always.
          if (scale < LABEL_ZOOM && n !== selected) return;
          ctx.font = 11 / scale + "px system-ui, sans-serif";
          ctx.textAlign = "center";
          ctx.textBaseline = "top";
          ctx.fillStyle = n === selected ? SELECTED : "rgba(216, 222, 230, 0.85)";
          ctx.fillText(labelOf(n), n.x, n.y + r + 2 / scale);
          labelsDrawn++;
        });
    }
    graph
      .width(width())
      .height(height())
      .backgroundColor(BACKGROUND)
      .nodeId("id")
      .nodeVal("val")
      .nodeColor((n) => (n === selected ? SELECTED : n.color))
      .nodeRelSize(4)
      .nodeLabel(tooltip)
      .enableNodeDrag(false)
      .onNodeClick((n) => handlers.onClick && handlers.onClick(n))
      .onBackgroundClick(() => handlers.onBackground && handlers.onBackground())
      .onEngineStop(onStop);
    if (mode === "3d") graph.onEngineTick(() => batch && batch.update());

    // 3D keeps rendering every frame even when nothing moves; pause it while idle.
    let idleTimer = 0;
    let paused = false;
    function idleSoon() {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        if (mode === "3d" && settled && !paused) {
          graph.pauseAnimation();
          paused = true;
        }
      }, 2500);
    }
    function wake() {
      if (mode !== "3d") return;
      if (paused) {
        graph.resumeAnimation();
        paused = false;
      }
      if (settled) idleSoon();
    }
    const events = ["pointermove", "pointerdown", "wheel", "keydown", "touchstart"];
    events.forEach((e) => el.addEventListener(e, wake, { passive: true }));

    function apply(data) {
      generation++;
      fitting = false;
      settled = false;
      wake();
      const t = layoutFor(data.nodes.length);
      const charge = graph.d3Force("charge");
      if (charge && charge.theta) charge.theta(t.theta).distanceMax(t.distanceMax);
      if (batch) {
        graph.linkVisibility(false);
        batch.setLinks(data.links);
      }
      graph.d3AlphaDecay(t.alphaDecay).warmupTicks(t.warmup).cooldownTicks(t.cooldown).graphData(data);
      loaded = true;
    }

    const view = {
      mode,
      graph,
      get settled() {
        return settled;
      },
      get selected() {
        return selected;
      },
      /** True once real data (not the 3D probe) is in the graph. */
      get loaded() {
        return loaded;
      },
      get linkMode() {
        return mode === "2d" ? "canvas" : batch ? "batched" : "library";
      },
      setData(data) {
        if (mode === "3d" && batch === undefined) {
          // First data for a 3D view: learn the three.js classes, then apply the latest data.
          const first = pending === null;
          pending = data;
          if (first) {
            window.memsvcLinkBatch.probe(graph).then((three) => {
              if (destroyed) return;
              batch = three ? window.memsvcLinkBatch.create(graph, three, LINK_3D, LINK_3D_OPACITY) : null;
              apply(pending);
            });
          }
          return;
        }
        apply(data);
      },
      /** Recolour after node.color changed (3D rebuilds materials; 2D redraws). */
      refreshColors() {
        wake();
        // A new accessor (not the same "color" key) is what makes the library re-read colours.
        graph.nodeColor((n) => (n === selected ? SELECTED : n.color));
      },
      select(node) {
        selected = node;
        wake();
        // 3D: the selected node turns white (a new accessor makes the library re-read colours); 2D draws a ring and its label.
        if (mode === "3d") graph.nodeColor((n) => (n === selected ? SELECTED : n.color));
        else graph.nodeCanvasObjectMode(() => "after");
      },
      /** Labels drawn so far (2D); tests read it to see labels appear when zoomed in. */
      get labelsDrawn() {
        return labelsDrawn;
      },
      /** The colour the renderer gives the selected node (null when none). */
      get highlighted() {
        if (!selected) return null;
        const acc = graph.nodeColor();
        return typeof acc === "function" ? acc(selected) : selected[acc];
      },
      focus(node) {
        wake();
        if (node.x === undefined) return;
        if (mode === "3d") {
          const r = Math.hypot(node.x, node.y, node.z || 0) || 1;
          const k = 1 + 90 / r;
          graph.cameraPosition({ x: node.x * k, y: node.y * k, z: (node.z || 0) * k }, { x: node.x, y: node.y, z: node.z || 0 }, 700);
        } else {
          graph.centerAt(node.x, node.y, 500);
          graph.zoom(Math.max(graph.zoom(), LABEL_ZOOM + 0.5), 500);
        }
      },
      /** Page coordinates of a node (for tests and keyboard users), null before layout. */
      screenOf(node) {
        if (!node || node.x === undefined) return null;
        const p = mode === "3d" ? graph.graph2ScreenCoords(node.x, node.y, node.z || 0) : graph.graph2ScreenCoords(node.x, node.y);
        const box = el.getBoundingClientRect();
        return { x: box.left + p.x, y: box.top + p.y };
      },
      resize() {
        wake();
        graph.width(width()).height(height());
      },
      destroy() {
        destroyed = true;
        clearTimeout(idleTimer);
        if (batch) batch.dispose();
        events.forEach((e) => el.removeEventListener(e, wake));
        try {
          graph.pauseAnimation && graph.pauseAnimation();
          graph._destructor();
        } catch (_) {
          /* a half-built view: the element is emptied below anyway */
        }
        el.replaceChildren();
      },
    };
    return view;
  }

  window.memsvcViz = { createView, hasWebGL, escapeHtml, BACKGROUND };
})();
