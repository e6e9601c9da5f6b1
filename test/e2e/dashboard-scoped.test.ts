import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { createToken } from "../../src/core/tokens";
import { ARTIFACTS, hasChromium, launchBrowser } from "../helpers/browser";
import { movableClock, seedDashboard } from "../helpers/dashboard-seed";
import { startServer, type TestServer } from "../helpers/server";

/** Chromium on a shared 2-core machine: a page load can take seconds. */
const BROWSER_TEST_MS = 60_000;

let browser: Browser | null = null;
let context: BrowserContext | null = null;
let srv: TestServer | null = null;

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await context?.close();
  await srv?.stop();
  await browser?.close();
});

describe("dashboard in Chromium, for a project-scoped token", () => {
  test.skipIf(!hasChromium)(
    "renders the project's figures alone: no nightly card, no account, nothing of other projects",
    async () => {
      const clock = movableClock();
      srv = await startServer({ now: clock.now, config: { displayName: "Ada Lovelace", orgName: "Analytical Engines", planLabel: "Team" } });
      await seedDashboard(srv.services, clock);
      // The seeded store: project atlas holds m1 (knowledge), m2 (experience) and m6 (learnings), linked m1-m2 and m6-m1;
      // in the last 30 days m1 was shown once, m6 three times and used twice (dashboard-seed.ts).
      const { token } = await createToken(srv.services.storage.tokens, { name: "atlas-reader", role: "reader", projects: "atlas" }, clock.now());
      context = await browser!.newContext({ viewport: { width: 1366, height: 768 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      await page.goto(`${srv.url}/dashboard?token=${token}`);
      await page.waitForFunction(() => (window as any).__dashboard?.renders >= 1);
      const text = (sel: string) => page.locator(sel).textContent();
      expect(await text("#kpi-memories")).toBe("3");
      expect(await text("#kpi-learnings")).toBe("1");
      expect(await text("#kpi-links")).toBe("2");
      expect(await text("#headline")).toBe("0.5");
      expect(await text("#headline-sub")).toBe("2 uses / 4 showings in the last 30 days");
      expect(await text("#meta")).toContain("project atlas");
      // Not per project: the nightly runs and the account are left out, and the page draws without them.
      expect(await page.locator("#chart-nightly").isHidden()).toBe(true);
      expect(await page.locator("#account").isHidden()).toBe(true);
      expect(await page.locator("#status").isHidden()).toBe(true);
      const c = await page.evaluate(() => (window as any).__dashboard.charts);
      expect(c.nightly).toBeUndefined();
      expect(c.domains.labels).toEqual(["atlas"]);
      expect(c.domains.datasets[0].data).toEqual([3]);
      const body = ((await page.locator("main").textContent()) ?? "").toLowerCase();
      for (const other of ["billing", "vega", "helios", "postgres", "redis", "kafka", "docker"]) expect(body).not.toContain(other);
      const painted = await page.evaluate(() =>
        Array.from(document.querySelectorAll("canvas"))
          .filter((cv) => cv.offsetParent !== null)
          .map((cv) => {
            const { data } = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height);
            let n = 0;
            for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
            return [cv.id, n > 500];
          }),
      );
      expect(painted).toEqual([
        ["chart-recall", true],
        ["chart-growth", true],
        ["chart-domains", true],
        ["chart-reach", true],
        ["chart-tokens", true],
      ]);
      expect(errors).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-scoped.png"), fullPage: true });
    },
    BROWSER_TEST_MS,
  );
});
