// All links of the 3D view as ONE line object. The library draws each link
// as its own THREE.Line: at 15,000 links that is 15,000 draw calls and
// buffer uploads per frame. Here one Float32Array holds every segment and is
// refilled in place on each layout tick (no allocation per frame).
//
// The 3D bundle does not export three.js, so its classes are taken from the
// line object the library builds for a one-link probe graph. If that ever
// fails (library internals changed), probe() answers null and the caller
// keeps the library's own links: slower, never broken.
(function () {
  "use strict";

  /** Resolves to the three.js classes needed, or null after ~60 frames without them. */
  function probe(graph) {
    const data = {
      nodes: [{ id: "__probe_a", val: 0.01, color: "#000000" }, { id: "__probe_b", val: 0.01, color: "#000000" }],
      links: [{ source: "__probe_a", target: "__probe_b" }],
    };
    graph.linkVisibility(true).warmupTicks(0).cooldownTicks(0).graphData(data);
    return new Promise((resolve) => {
      let frames = 0;
      const check = () => {
        const line = data.links[0].__lineObj;
        const attr = line && line.geometry && line.geometry.getAttribute && line.geometry.getAttribute("position");
        if (line && line.isLine && attr && line.material && line.material.isLineBasicMaterial) {
          return resolve({ Line: line.constructor, BufferGeometry: line.geometry.constructor, BufferAttribute: attr.constructor, LineBasicMaterial: line.material.constructor });
        }
        if (++frames > 60) return resolve(null);
        requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    });
  }

  function create(graph, three, color, opacity) {
    const material = new three.LineBasicMaterial({ color, transparent: true, opacity, depthWrite: false });
    let geometry = new three.BufferGeometry();
    const line = new three.Line(geometry, material);
    // Drawn as separate segments (gl.LINES), as THREE.LineSegments would be.
    line.isLineSegments = true;
    line.type = "LineSegments";
    line.frustumCulled = false;
    line.renderOrder = 10;
    graph.scene().add(line);
    let links = [];
    let positions = new Float32Array(0);

    return {
      setLinks(next) {
        links = next;
        if (positions.length !== links.length * 6) {
          positions = new Float32Array(links.length * 6);
          geometry.dispose();
          geometry = new three.BufferGeometry();
          geometry.setAttribute("position", new three.BufferAttribute(positions, 3));
          line.geometry = geometry;
        }
        this.update();
      },
      /** Copies the current node positions into the segment buffer. */
      update() {
        const p = positions;
        for (let i = 0, j = 0; i < links.length; i++, j += 6) {
          const s = links[i].source;
          const t = links[i].target;
          // Before the layout binds them, link ends are still ids: park them at the origin.
          p[j] = s.x || 0;
          p[j + 1] = s.y || 0;
          p[j + 2] = s.z || 0;
          p[j + 3] = t.x || 0;
          p[j + 4] = t.y || 0;
          p[j + 5] = t.z || 0;
        }
        const attr = geometry.getAttribute("position");
        if (attr) attr.needsUpdate = true;
      },
      dispose() {
        graph.scene().remove(line);
        geometry.dispose();
        material.dispose();
      },
    };
  }

  window.memsvcLinkBatch = { probe, create };
})();
