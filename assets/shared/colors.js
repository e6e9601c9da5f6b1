// One colour per memory type and per domain on every page: the same name
// always maps to the same colour (fixed for the four types, a hash of the
// name into a palette for domains), never to its rank in a list.
(function () {
  const TYPES = { knowledge: "#4e79a7", experience: "#59a14f", decisions: "#e15759", learnings: "#b07aa1" };
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#8cd17d", "#499894", "#f1ce63", "#a0cbe8", "#fabfd2"];
  function hash(s) {
    // FNV-1a, 32 bit: tiny, stable across browsers and sessions.
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return h >>> 0;
  }
  function domain(name) { return PALETTE[hash(String(name || "general")) % PALETTE.length]; }
  function type(name) { return TYPES[name] || domain(name); }
  window.memsvcColors = { type, domain, TYPES, PALETTE };
})();
