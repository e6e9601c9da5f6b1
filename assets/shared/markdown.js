// Markdown for every page: marked (GFM: tables, task lists, fenced code)
// then DOMPurify, so memory and identity text can never inject markup or script.
(function () {
  function render(text) {
    const html = window.marked.parse(String(text || ""), { gfm: true, breaks: false, async: false });
    return window.DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form"], FORBID_ATTR: ["style"] });
  }
  /** Renders into an element; links open in a new tab without a Referer. */
  function into(el, text) {
    el.innerHTML = render(text);
    for (const a of el.querySelectorAll("a[href]")) { a.target = "_blank"; a.rel = "noopener noreferrer"; }
  }
  window.memsvcMarkdown = { render, into };
})();
