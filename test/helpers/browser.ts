import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// Playwright makes a fresh profile per launch (it refuses --user-data-dir here).
/** Browser tests run only where Debian's chromium is installed; elsewhere they report as skipped. */
export const hasChromium = existsSync(CHROMIUM);

export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--use-gl=swiftshader",
      "--enable-unsafe-swiftshader",
    ],
  });
}

/** Folder for screenshots kept by CI (test-artifacts/ at the project root). */
export const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts");
