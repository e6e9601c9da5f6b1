// The bar every page shares: links to the five pages, the current one marked.
(function () {
  const PAGES = [["/memories", "Memories"], ["/sessions", "Sessions"], ["/viz", "Graph"], ["/identity/ui", "Identity"], ["/dashboard", "Dashboard"]];
  const nav = document.createElement("nav");
  nav.className = "memsvc-nav";
  nav.setAttribute("aria-label", "memsvc pages");
  const brand = document.createElement("a");
  brand.className = "brand";
  brand.href = "/memories";
  brand.innerHTML = '<img src="/favicon.svg" alt="" width="18" height="18"><span>memsvc</span>';
  nav.appendChild(brand);
  for (const [href, label] of PAGES) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = label;
    if (location.pathname === href) a.setAttribute("aria-current", "page");
    nav.appendChild(a);
  }
  document.body.prepend(nav);
})();
