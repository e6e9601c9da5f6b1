// Markdown for every page: marked (GFM: tables, task lists, fenced code)
// then DOMPurify, so memory and identity text can never inject markup or script.
// Raw HTML inside the Markdown is shown as text, not parsed: memories are
// notes, not pages, and parsing it would make Chromium report the CSP
// blocking any inline handler it carries even though nothing runs.
(function () {
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  const md = new window.marked.Marked({ gfm: true, breaks: false, async: false, renderer: { html: (token) => esc(token.text) } });
  function render(text) {
    return window.DOMPurify.sanitize(md.parse(String(text || "")), { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form"], FORBID_ATTR: ["style"] });
  }
  /** Renders into an element; links open in a new tab without a Referer. */
  function into(el, text) {
    el.innerHTML = render(text);
    for (const a of el.querySelectorAll("a[href]")) { a.target = "_blank"; a.rel = "noopener noreferrer"; }
  }
  window.memsvcMarkdown = { render, into };
})();
