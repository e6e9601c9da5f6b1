import type { Browser, BrowserContext, Page } from "playwright-core";
import { join } from "node:path";
import { ARTIFACTS } from "./browser";

/** The two screens every page is checked at. */
export const VIEWPORTS = { laptop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** Requests for any other origin than the server's: aborted and recorded. */
  outside: string[];
  /** Console errors and uncaught exceptions (CSP violations land here). */
  errors: string[];
  /** Referer headers sent with any request. */
  referers: string[];
}

/** A fresh context at a viewport; everything leaving the server is aborted and recorded. */
export async function watchedPage(browser: Browser, origin: string, viewport: { width: number; height: number }): Promise<Watched> {
  const context = await browser.newContext({ viewport });
  const w: Watched = { page: null as unknown as Page, context, outside: [], errors: [], referers: [] };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      w.outside.push(url);
      return route.abort();
    }
    const ref = route.request().headers().referer;
    if (ref) w.referers.push(ref);
    return route.continue();
  });
  w.page = await context.newPage();
  w.page.on("pageerror", (e) => w.errors.push(e.message));
  w.page.on("console", (m) => {
    if (m.type() === "error") w.errors.push(m.text());
  });
  return w;
}

/** scrollWidth - innerWidth: > 0 means the page scrolls sideways. */
export const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

export const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
