import dompurify from "../../node_modules/dompurify/dist/purify.min.js" with { type: "file" };
import marked from "../../node_modules/marked/lib/marked.umd.js" with { type: "file" };
import authJs from "../../assets/shared/auth.js" with { type: "file" };
import colorsJs from "../../assets/shared/colors.js" with { type: "file" };
import favicon from "../../assets/shared/favicon.svg" with { type: "file" };
import markdownJs from "../../assets/shared/markdown.js" with { type: "file" };
import shellCss from "../../assets/shared/shell.css" with { type: "file" };
import shellJs from "../../assets/shared/shell.js" with { type: "file" };

/**
 * Page shells and their static files are embedded in the binary (imported
 * `with { type: "file" }`) and served from fixed maps: a request can only
 * name a key, never a path, so nothing outside the map is reachable.
 */
const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
};

// Pages load only what this server serves: no CDN, no external fonts, no beacons.
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export function fileResponse(path: string, name: string): Response {
  const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return new Response(Bun.file(path), {
    headers: {
      "content-type": TYPES[ext] ?? "application/octet-stream",
      "content-security-policy": PAGE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-cache",
    },
  });
}

/** Shared page scripts, served at /assets/<name>. */
export const SHARED_ASSETS: Readonly<Record<string, string>> = {
  "auth.js": authJs,
  "colors.js": colorsJs,
  "markdown.js": markdownJs,
  "shell.css": shellCss,
  "shell.js": shellJs,
};

/**
 * The only files /assets/vendor/ serves: Markdown rendering and sanitising
 * libraries from npm (their plain-script builds), embedded in the binary.
 */
export const SHARED_VENDOR: Readonly<Record<string, string>> = { "marked.js": marked, "purify.js": dompurify };

/** The favicon every page names (also answered at /favicon.ico, which browsers ask for on their own). */
export const FAVICON = favicon;
