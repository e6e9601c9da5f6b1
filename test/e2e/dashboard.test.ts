import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { updateBacklog } from "../../src/capture/backlog";
import { ARTIFACTS, hasChromium, launchBrowser } from "../helpers/browser";
import { EXPECTED, movableClock, seedDashboard } from "../helpers/dashboard-seed";
import { dbRow, dbRows } from "../helpers/engine";
import { startServer, type TestServer } from "../helpers/server";

/** Chromium on a shared 2-core machine: a page load can take seconds. */
const BROWSER_TEST_MS = 60_000;

let browser: Browser | null = null;
let context: BrowserContext | null = null;
let srv: TestServer | null = null;
let proxy: net.Server | null = null;

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = null;
  proxy?.close();
  proxy = null;
  await srv?.stop();
  srv = null;
});

interface Seen {
  requests: { method: string; url: string }[];
  /** Requests for any other origin than the server's: aborted and recorded. */
  outside: string[];
  /** Console errors and uncaught exceptions (a CSP violation is reported here). */
  errors: string[];
}

/** A seeded server and a laptop-sized page on /dashboard, every request recorded. */
async function openDashboard(path = "/dashboard", base?: (port: number) => Promise<string>): Promise<{ page: Page; seen: Seen }> {
  const clock = movableClock();
  srv = await startServer({ now: clock.now, config: { displayName: "Ada Lovelace", orgName: "Analytical Engines", planLabel: "Team" } });
  await seedDashboard(srv.services, clock);
  const origin = base ? await base(srv.port) : srv.url;
  context = await browser!.newContext({ viewport: { width: 1366, height: 768 } });
  const seen: Seen = { requests: [], outside: [], errors: [] };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      seen.outside.push(url);
      return route.abort();
    }
    return route.continue();
  });
  const page = await context.newPage();
  page.on("request", (r) => seen.requests.push({ method: r.method(), url: r.url() }));
  page.on("pageerror", (e) => seen.errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") seen.errors.push(m.text());
  });
  await page.goto(`${origin}${path}`);
  return { page, seen };
}

const rendered = (page: Page, atLeast = 1) => page.waitForFunction((n) => (window as any).__dashboard?.renders >= n, atLeast);
const charts = (page: Page) => page.evaluate(() => (window as any).__dashboard.charts);
const text = (page: Page, sel: string) => page.locator(sel).textContent();
const series = (chart: { datasets: { label: string; data: unknown[] }[] }, label: string) => chart.datasets.find((d) => d.label === label)?.data;

/** Counts of everything a page could change. */
async function dbState(): Promise<unknown> {
  return dbRow(
    srv!.services,
    `SELECT (SELECT count(*) FROM memories) AS memories, (SELECT count(*) FROM memory_events) AS events, (SELECT count(*) FROM links) AS links,
            (SELECT sum(shown_count) FROM memories) AS shown, (SELECT sum(used_count) FROM memories) AS used, (SELECT sum(strength) FROM memories) AS strength,
            (SELECT count(*) FROM memory_tags) AS tags, (SELECT count(*) FROM nightly_runs) AS runs, (SELECT max(updated_at) FROM memories) AS updated`,
  );
}

describe("dashboard in Chromium", () => {
  test.skipIf(!hasChromium)(
    "every chart is drawn with the seeded numbers; uses per showing is the headline",
    async () => {
      const { page } = await openDashboard();
      await rendered(page);
      // The headline is the selected period's (30 days): the showings 45 days ago are outside it.
      expect(await text(page, "#headline")).toBe("0.4");
      expect(await text(page, "#headline-sub")).toBe("4 uses / 10 showings in the last 30 days");
      expect(await text(page, "#kpi-memories-added")).toBe("+9 in 30 days");
      expect(await text(page, "#kpi-learnings-added")).toBe("+2 in 30 days");
      expect(await text(page, "#kpi-memories")).toBe("12");
      expect(await text(page, "#kpi-learnings")).toBe("2");
      expect(await text(page, "#kpi-links")).toBe("4");
      expect(await text(page, "#kpi-domains")).toBe("8");
      expect(await text(page, "#kpi-never-shown")).toBe("33.3%");
      expect(await text(page, "#kpi-never-used")).toBe("66.7%");
      expect(await text(page, "#account-name")).toBe("Ada Lovelace");
      expect(await text(page, "#account-org")).toBe("Analytical Engines");
      expect(await text(page, "#account-plan")).toBe("Team");

      const c = await charts(page);
      const days: string[] = c.recall.labels;
      expect(days).toHaveLength(30);
      expect([days[0], days[29]]).toEqual([EXPECTED.window.from, EXPECTED.window.to]);
      const rec = (i: number) => EXPECTED.recall.days[days[i]] ?? [0, 0, null];
      expect(series(c.recall, "Showings")).toEqual(days.map((_, i) => rec(i)[0]));
      expect(series(c.recall, "Uses")).toEqual(days.map((_, i) => rec(i)[1]));
      expect(series(c.recall, "Uses per showing")).toEqual(days.map((_, i) => rec(i)[2]));

      expect(c.growth.labels).toEqual(days);
      const added = (t: number) => days.map((d) => (EXPECTED.growth.added[d] ?? [0, 0, 0, 0])[t]);
      ["knowledge", "experience", "decisions", "learnings"].forEach((type, t) => {
        expect(series(c.growth, type)).toEqual(added(t));
      });
      let total = EXPECTED.growth.base;
      expect(series(c.growth, "Total")).toEqual(days.map((d) => (total += (EXPECTED.growth.added[d] ?? [0]).reduce((a, b) => a + b, 0))));
      expect(total).toBe(12);

      expect(c.domains.labels).toEqual([...EXPECTED.domains.top.map((x) => x.domain), "other (1 domain)"]);
      expect(c.domains.datasets[0].data).toEqual([...EXPECTED.domains.top.map((x) => x.memories), 1]);

      expect(c.reach.labels).toEqual(["Shown", "Used"]);
      expect(series(c.reach, "at least once")).toEqual([8, 4]);
      expect(series(c.reach, "never")).toEqual([4, 8]);

      expect(c.nightly.labels).toEqual([...EXPECTED.nightlyDays].reverse());
      expect(series(c.nightly, "Learnings written")).toEqual([2, 3, 4, 5, 6, 7, 8]);
      expect(series(c.nightly, "Merged")).toEqual([2, 0, 1, 2, 0, 1, 2]);
      expect(await page.locator("#nightly-table tbody tr").count()).toBe(7);
      expect(await text(page, "#nightly-table tbody tr:nth-child(6)")).toContain("skipped learn: model failed: timeout");

      // Drawn, not just configured: every canvas has painted pixels.
      const painted = await page.evaluate(() =>
        Array.from(document.querySelectorAll("canvas")).map((cv) => {
          const { data } = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height);
          let n = 0;
          for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
          return [cv.id, cv.width > 100 && cv.height > 100 && n > 500];
        }),
      );
      expect(painted).toEqual([
        ["chart-recall", true],
        ["chart-growth", true],
        ["chart-domains", true],
        ["chart-reach", true],
        ["chart-tokens", true],
        ["chart-nightly", true],
      ]);
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-light.png"), fullPage: true });
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "the capture backlog notice says how many sessions wait, in the singular and the plural",
    async () => {
      const { page } = await openDashboard();
      await rendered(page);
      expect(await page.locator("#backlog").isHidden()).toBe(true);
      const home = srv!.services.config.home;
      const files = ["a", "b", "c"].map((n) => join(home, `transcript-${n}.jsonl`));
      for (const f of files) writeFileSync(f, "{}\n");
      const waiting = (file: string, reason: "no-model" | "model-failed") => ({ file, format: null, agent: null, reason, message: "" });
      updateBacklog(home, [waiting(files[0]!, "no-model"), waiting(files[1]!, "model-failed"), waiting(files[2]!, "model-failed")], []);
      await page.reload();
      await rendered(page);
      const notice = await text(page, "#backlog");
      expect(notice).toContain("1 session waits for a language model");
      expect(notice).toContain("2 sessions wait for the language model to answer again");
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "nothing is requested from outside the server",
    async () => {
      const { page, seen } = await openDashboard();
      await rendered(page);
      await page.locator("#days").selectOption("7");
      await rendered(page, 2);
      const origin = new URL(srv!.url).origin;
      expect(seen.outside).toEqual([]);
      expect(seen.errors).toEqual([]); // no CSP violation: the library needs neither eval nor inline scripts
      expect(seen.requests.every((r) => new URL(r.url).origin === origin)).toBe(true);
      const paths = seen.requests.map((r) => new URL(r.url).pathname);
      expect(paths).toContain("/dashboard/vendor/chart.js");
      expect(paths).toContain("/dashboard/data");
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "no control but Retire can change data: every other request is a GET, the store is unchanged",
    async () => {
      const { page, seen } = await openDashboard();
      await rendered(page);
      const before = await dbState();
      const controls = page.locator("button, a[href], select, input, textarea, [role=button], [onclick], form");
      const kinds = await controls.evaluateAll((els) =>
        els.filter((e) => !e.closest(".memsvc-nav") && !e.closest("#retire-table")).map((e) => e.tagName.toLowerCase()),
      );
      expect(kinds.sort()).toEqual(["button", "select"]); // Refresh and the period
      // The candidates to retire: a link to the memory browser and the one action each, left unclicked here.
      const candidates = await page.locator("#retire-table tbody tr").count();
      expect(candidates).toBeGreaterThan(0);
      expect(await page.locator("#retire-table button.retire").count()).toBe(candidates);
      expect(await page.locator("#retire-table a[href^='/memories#']").count()).toBe(candidates);
      // The shared bar only links to the pages.
      const nav = await page.locator(".memsvc-nav a").evaluateAll((els) => els.map((e) => new URL((e as HTMLAnchorElement).href).pathname));
      expect(nav).toEqual(["/memories", "/memories", "/sessions", "/viz", "/identity/ui", "/dashboard"]);
      expect(await page.locator("form").count()).toBe(0);
      let renders = 1;
      await page.locator("#refresh").click();
      await rendered(page, ++renders);
      for (const value of await page.locator("#days option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))) {
        if (value === (await page.locator("#days").inputValue())) continue;
        await page.locator("#days").selectOption(value);
        await rendered(page, ++renders);
        expect((await charts(page)).recall.labels).toHaveLength(Number(value));
      }
      // Chart legends are controls too (each entry toggles a series): click every one; they only redraw.
      const legendItems = await page.evaluate(() =>
        Array.from(document.querySelectorAll("canvas")).flatMap((cv) =>
          ((window as any).Chart.getChart(cv).legend.legendHitBoxes as { left: number; top: number; width: number; height: number }[]).map((b) => ({
            id: cv.id,
            x: b.left + b.width / 2,
            y: b.top + b.height / 2,
          })),
        ),
      );
      expect(legendItems.length).toBe(3 + 5 + 9 + 2 + 2 + 4); // recall, growth (4 types + total), domains (8 + other), reach, tokens, nightly
      for (const item of legendItems) await page.locator(`#${item.id}`).click({ position: { x: item.x, y: item.y } });
      await page.keyboard.press("Enter");
      expect(seen.requests.length).toBeGreaterThan(4);
      expect([...new Set(seen.requests.map((r) => r.method))]).toEqual(["GET"]);
      expect(await dbState()).toEqual(before);
      expect(new URL(page.url()).searchParams.get("days")).toBe("365");
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "Retire on a memory shown often and never used takes it out of search, keeps it, and lists it no more",
    async () => {
      const { page, seen } = await openDashboard();
      await rendered(page);
      const first = page.locator("#retire-table tbody tr").first();
      const id = (await first.getAttribute("data-id"))!;
      const content = (await dbRow(srv!.services, "SELECT content FROM memories WHERE id = ?", [id])) as { content: string };
      await first.locator("button.retire").click();
      await page.waitForFunction(() => (window as any).__dashboard.retired === 1);
      expect(seen.requests.filter((r) => r.method !== "GET").map((r) => new URL(r.url).pathname)).toEqual(["/memory/review"]);
      const found = await (await fetch(`${srv!.url}/search?query=${encodeURIComponent(content.content.slice(0, 60))}&limit=20`)).json();
      expect(found.results.map((r: { id: string }) => r.id)).not.toContain(id);
      expect(await dbRow(srv!.services, "SELECT count(*) AS n FROM memories WHERE id = ?", [id])).toEqual({ n: 1 });
      await page.locator("#refresh").click();
      await rendered(page, 2);
      expect(await page.locator(`#retire-table tbody tr[data-id="${id}"]`).count()).toBe(0);
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "dark mode: dark background, readable text, charts redrawn in the dark palette",
    async () => {
      const { page } = await openDashboard();
      await rendered(page);
      const lightTick = await page.evaluate(() => (window as any).Chart.defaults.color);
      await page.emulateMedia({ colorScheme: "dark" });
      await rendered(page, 2);
      const [bg, fg, muted] = await page.evaluate(() => {
        const lum = (c: string) => {
          const [r, g, b] = (c.match(/\d+/g) ?? [])
            .map(Number)
            .map((v) => v / 255)
            .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        const body = getComputedStyle(document.body);
        const probe = document.createElement("span");
        probe.style.color = (window as any).Chart.defaults.color;
        document.body.appendChild(probe);
        const tick = getComputedStyle(probe).color;
        probe.remove();
        return [lum(body.backgroundColor), lum(body.color), lum(tick)];
      });
      expect(bg).toBeLessThan(0.05);
      expect((fg + 0.05) / (bg + 0.05)).toBeGreaterThan(7);
      expect((muted + 0.05) / (bg + 0.05)).toBeGreaterThan(4.5); // axis labels and legends
      expect(await page.evaluate(() => (window as any).Chart.defaults.color)).not.toBe(lightTick);
      expect(await text(page, "#headline")).toBe("0.4");
      await page.screenshot({ path: join(ARTIFACTS, "dashboard-dark.png"), fullPage: true });
    },
    BROWSER_TEST_MS,
  );
});

describe("dashboard of an empty store", () => {
  test.skipIf(!hasChromium)(
    "renders without errors: no headline figure, zeros, no nightly run",
    async () => {
      srv = await startServer();
      context = await browser!.newContext({ viewport: { width: 1366, height: 768 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${srv.url}/dashboard`);
      await rendered(page);
      expect(await text(page, "#headline")).toBe("—");
      expect(await text(page, "#headline-sub")).toBe("No memory has been shown yet");
      expect(await text(page, "#kpi-memories")).toBe("0");
      expect(await text(page, "#kpi-never-shown")).toBe("—");
      expect(await page.locator("#nightly-empty").isVisible()).toBe(true);
      expect(await page.locator("#nightly-table").isVisible()).toBe(false);
      expect((await charts(page)).domains.labels).toEqual([]);
      expect(await page.locator("#status").isVisible()).toBe(false);
      expect(errors).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});

describe("dashboard from a remote peer", () => {
  /** A relay whose upstream sockets leave from 127.0.0.2, so the server sees a non-localhost peer. */
  const relay = async (port: number) => {
    proxy = net.createServer((client) => {
      const upstream = net.connect({ host: "127.0.0.1", port, localAddress: "127.0.0.2" });
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  };

  test.skipIf(!hasChromium)(
    "without a token the page asks for one and shows no figures; with it the figures load",
    async () => {
      const { page } = await openDashboard("/dashboard", relay);
      const dialog = page.locator("#memsvc-token-dialog");
      await dialog.waitFor();
      expect(await text(page, "#headline")).toBe("—");
      await dialog.locator("input").fill(srv!.token);
      await dialog.locator("#memsvc-token-ok").click();
      await rendered(page);
      expect(await text(page, "#headline")).toBe("0.4");
      expect(await page.evaluate(() => localStorage.getItem("memsvc.token"))).toBe(srv!.token);
    },
    BROWSER_TEST_MS,
  );
});

describe("dashboard: bugs found when trying the page", () => {
  test.skipIf(!hasChromium)(
    "the headline and tiles follow the selected period",
    async () => {
      const { page, seen } = await openDashboard();
      await rendered(page);
      await page.selectOption("#days", "7");
      await rendered(page, 2);
      expect(await text(page, "#headline")).toBe("0.5");
      expect(await text(page, "#headline-sub")).toBe("3 uses / 6 showings in the last 7 days");
      expect(await text(page, "#kpi-memories-added")).toBe("+4 in 7 days");
      expect(await text(page, "#kpi-learnings-added")).toBe("+1 in 7 days");
      expect(seen.errors).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "the nightly chart runs by day (a forced re-run of an older day sits on that day); a skipped learn step is not 'done'",
    async () => {
      const clock = movableClock();
      srv = await startServer({ now: clock.now });
      await seedDashboard(srv.services, clock);
      // Run last, for a day two weeks back: in run order it would be drawn rightmost.
      const day = EXPECTED.nightlyDays[0];
      const old = new Date(Date.parse(`${day}T00:00:00Z`) - 14 * 86_400_000).toISOString().slice(0, 10);
      const digest = {
        day: old,
        status: "done",
        written: 0,
        merged: 1,
        dropped: 0,
        decayed: 3,
        skipped: [{ step: "learn", reason: "no language model configured" }],
        errors: [],
      };
      await dbRows(
        srv.services,
        "INSERT INTO nightly_runs(day, status, forced, owner, started_at, heartbeat_at, finished_at, digest) VALUES (?, 'done', 1, 'seed', ?, ?, ?, ?)",
        [old, clock.now(), clock.now(), clock.now(), JSON.stringify(digest)],
      );
      context = await browser!.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${srv.url}/dashboard`);
      await rendered(page);
      const labels: string[] = (await charts(page)).nightly.labels;
      expect(labels).toEqual([...labels].sort());
      expect(labels[0]).toBe(old);
      expect(labels[labels.length - 1]).toBe(day);
      expect(new Set(labels).size).toBe(labels.length);
      const data = await page.evaluate(() => (window as any).__dashboard.data.nightly.map((r: any) => r.day));
      expect(data).toContain(old);
      const row = page.locator("#nightly-table tbody tr", { hasText: old });
      expect(await row.locator("td").nth(1).textContent()).toBe("done, learn skipped");
      expect(await row.locator("td").nth(1).getAttribute("class")).toBe("warn");
    },
    BROWSER_TEST_MS,
  );

  test.skipIf(!hasChromium)(
    "fits a 390 px phone and a 1440 px laptop without sideways scroll",
    async () => {
      for (const [name, viewport] of [
        ["laptop", { width: 1440, height: 900 }],
        ["phone", { width: 390, height: 844 }],
      ] as const) {
        const { page, seen } = await openDashboard();
        await page.setViewportSize(viewport);
        await rendered(page);
        await page.waitForTimeout(200);
        expect(await page.title()).toBe("Dashboard · memsvc");
        expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
        expect(seen.outside).toEqual([]);
        expect(seen.errors).toEqual([]);
        await context!.close();
        context = null;
        await srv!.stop();
        srv = null;
      }
    },
    BROWSER_TEST_MS * 2,
  );
});
