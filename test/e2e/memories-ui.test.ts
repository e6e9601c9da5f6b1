import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { ARTIFACTS, hasChromium, launchBrowser } from "../helpers/browser";
import { dbRow } from "../helpers/engine";
import { seedGraph, type SeedMemory } from "../helpers/graph-seed";
import { storedVector } from "../helpers/stored-vector";
import { overflow, shot, VIEWPORTS, watchedPage, type Watched } from "../helpers/page-check";
import { postJson, requestFrom, startServer, type TestServer } from "../helpers/server";

const SLOW = 90_000;
let browser: Browser | null = null;
let srv: TestServer;
let ids: Record<string, string>;
let w: Watched | null = null;

const N = 130;
const SEED: SeedMemory[] = Array.from({ length: N }, (_, i) => ({
  key: `m${i}`,
  content:
    i === 0
      ? "# Deploy checklist\n\n| step | owner |\n|---|---|\n| migrate | ops |\n\n- [x] backup\n- [ ] notify\n\n```sh\nbun run deploy\n```\n\n<img src=/favicon.svg onerror=alert(1)>"
      : `Memory number ${i} about ${i % 2 ? "databases and ports" : "cooking onions"}`,
  project: i % 3 === 0 ? "infra" : "kitchen",
  type: ["knowledge", "experience", "decisions", "learnings"][i % 4],
  ageDays: i,
}));

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  srv = await startServer();
  ids = await seedGraph(srv.services, SEED, [
    ["m0", "m1", "related", 0.75],
    ["m2", "m0", "caused_by", 0.5],
  ]);
});
afterEach(async () => {
  await w?.context.close();
  w = null;
  await srv.stop();
});

const rendered = (n: number) => w!.page.waitForFunction((k) => (window as any).__memories?.renders >= k, n);
const renders = () => w!.page.evaluate(() => (window as any).__memories.renders as number);
const rows = () => w!.page.locator("#list li[data-index]").count();
/** The memory id of the list row at an index (rows are `li#m-<id>`). */
const rowId = async (i: number) => (await w!.page.locator(`#list li[data-index="${i}"]`).getAttribute("id"))!.slice(2);

async function open(path = "/memories", viewport: { width: number; height: number } = VIEWPORTS.laptop) {
  w = await watchedPage(browser!, srv.url, viewport);
  await w.page.goto(`${srv.url}${path}`);
  await rendered(1);
}

async function expectClean() {
  expect(w!.outside).toEqual([]);
  expect(w!.errors).toEqual([]);
  expect(w!.referers).toEqual([]);
  expect(await overflow(w!.page)).toBeLessThanOrEqual(0);
}

describe("/memories in headless Chromium", () => {
  test.skipIf(!hasChromium)(
    "lists, pages, filters and searches; keyboard opens and closes the detail; nothing counts as a use",
    async () => {
      await open();
      expect(await w!.page.title()).toBe("Memories · memsvc");
      expect(await rows()).toBe(50);
      expect(await w!.page.locator("#count").textContent()).toContain("130 memories");
      expect(await w!.page.locator(".memsvc-nav a[aria-current=page]").textContent()).toBe("Memories");
      await shot(w!.page, "memories-laptop");

      // Scrolling to the end loads the next keyset page.
      await w!.page.locator("#list li[data-index]").last().scrollIntoViewIfNeeded();
      await w!.page.evaluate(() => document.querySelector("#list-pane")!.dispatchEvent(new Event("scroll")));
      await w!.page.waitForFunction(() => document.querySelectorAll("#list li[data-index]").length === 100);
      expect(await w!.page.evaluate(() => document.querySelector("#list-pane")!.scrollTop)).toBeGreaterThan(0);
      // Another sort reloads a first page of 50 (taller than the pane): it is shown from its top.
      await w!.page.click("#more-filters summary");
      let before = await renders();
      await w!.page.selectOption("select[name=sort]", "importance");
      await rendered(before + 1);
      expect(await rows()).toBe(50);
      expect(await w!.page.evaluate(() => document.querySelector("#list-pane")!.scrollTop)).toBe(0);
      before = await renders();
      await w!.page.selectOption("select[name=sort]", "");
      await rendered(before + 1);

      // A filter: the address bar keeps it, the list and count follow.
      before = await renders();
      await w!.page.selectOption("select[name=type]", "decisions");
      await rendered(before + 1);
      expect(await w!.page.locator("#count").textContent()).toContain(`${SEED.filter((m) => m.type === "decisions").length} memories`);
      expect(new URL(w!.page.url()).searchParams.get("type")).toBe("decisions");
      before = await renders();
      await w!.page.selectOption("select[name=type]", "");
      await rendered(before + 1);

      // `/` focuses the search; typing searches. Focus leaves the select by a click on the
      // count, which opens nothing (a click on a row would open a detail of its own).
      await w!.page.locator("#count").click();
      await w!.page.keyboard.press("/");
      expect(await w!.page.evaluate(() => document.activeElement?.id)).toBe("q");
      before = await renders();
      await w!.page.keyboard.type("databases ports");
      await w!.page.waitForFunction((n) => (window as any).__memories.renders > n && document.querySelector("#list li[data-index]"), before);
      await w!.page.waitForFunction(() => new URL(location.href).searchParams.get("query") === "databases ports" && (window as any).__memories.idle);
      expect(await w!.page.locator("#list li[data-index] .preview").first().textContent()).toContain("databases");

      // Arrows move, Enter opens, Escape closes.
      await w!.page.keyboard.press("ArrowDown");
      await w!.page.keyboard.press("ArrowDown");
      expect(await w!.page.locator("#list li[aria-selected=true]").getAttribute("data-index")).toBe("1");
      expect(await w!.page.evaluate(() => (window as any).__memories.details)).toBe(0);
      await w!.page.keyboard.press("Enter");
      await w!.page.waitForFunction(() => (window as any).__memories.details === 1);
      expect(await w!.page.locator("#detail").isVisible()).toBe(true);
      // The detail shown is the selected row's.
      expect(await w!.page.locator("#detail .short-id").textContent()).toBe((await rowId(1)).slice(0, 8));
      const openedId = (await w!.page.locator("#facts").textContent())!.match(/[0-9a-f]{8}-[0-9a-f-]{27}/)![0];
      await w!.page.keyboard.press("Escape");
      await w!.page.locator("#detail").waitFor({ state: "hidden", timeout: 5000 });

      // Escape while the detail is still loading: it stays closed when the answer comes.
      const detailUrl = (u: URL) => u.pathname === "/memories/detail";
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      await w!.page.route(detailUrl, async (route) => {
        await held;
        await route.fallback();
      });
      const asked = w!.page.waitForRequest((r) => detailUrl(new URL(r.url())));
      await w!.page.keyboard.press("Enter");
      await asked;
      await w!.page.keyboard.press("Escape");
      release();
      await w!.page.waitForFunction(() => (window as any).__memories.detailsDropped === 1 || (window as any).__memories.details === 2);
      expect(await w!.page.evaluate(() => (window as any).__memories.details)).toBe(1);
      expect(await w!.page.locator("#detail").isHidden()).toBe(true);
      await w!.page.unroute(detailUrl);

      // A slow answer never replaces a newer one: row 2's detail is held back while row 3 opens.
      const slowId = await rowId(2);
      const fastId = await rowId(3);
      let releaseSlow = () => {};
      const slowHeld = new Promise<void>((r) => (releaseSlow = r));
      const slowUrl = (u: URL) => detailUrl(u) && u.searchParams.get("id") === slowId;
      await w!.page.route(slowUrl, async (route) => {
        await slowHeld;
        await route.fallback();
      });
      const slowAsked = w!.page.waitForRequest((r) => slowUrl(new URL(r.url())));
      await w!.page.locator('#list li[data-index="2"]').click();
      await slowAsked;
      await w!.page.locator('#list li[data-index="3"]').click();
      await w!.page.waitForFunction(() => (window as any).__memories.details === 2);
      releaseSlow();
      await w!.page.waitForFunction(() => (window as any).__memories.detailsDropped === 2 || (window as any).__memories.details === 3);
      expect(await w!.page.evaluate(() => (window as any).__memories.details)).toBe(2);
      expect(await w!.page.locator("#detail .short-id").textContent()).toBe(fastId.slice(0, 8));
      await w!.page.unroute(slowUrl);

      const used = (await dbRow<{ n: number }>(srv.services, "SELECT sum(used_count) AS n FROM memories"))!.n;
      expect(used).toBe(0);
      expect(openedId.length).toBe(36);
      await expectClean();
    },
    SLOW,
  );

  test.skipIf(!hasChromium)(
    "detail: sanitised Markdown with tables and task lists, provenance, citation copy, clickable links; edit and delete",
    async () => {
      await open(`/memories#${ids.m0}`);
      await w!.page.waitForFunction(() => (window as any).__memories.details === 1);
      const content = w!.page.locator("#content");
      expect(await content.locator("table td").first().textContent()).toBe("migrate");
      expect(await content.locator("input[type=checkbox]").count()).toBe(2);
      expect(await content.locator("pre code").textContent()).toContain("bun run deploy");
      expect(await content.locator("img").count()).toBe(0);
      expect(await content.textContent()).toContain("<img src=/favicon.svg onerror=alert(1)>");
      expect(await content.locator("h1").textContent()).toBe("Deploy checklist");
      expect(await w!.page.locator("#citation").textContent()).toContain(ids.m0.slice(0, 8));
      const facts = (await w!.page.locator("#facts").textContent())!;
      for (const s of ["seed", "infra", "effective", "stored", "Shown", "Used"]) expect(facts).toContain(s);
      expect(await w!.page.locator("#links li").count()).toBe(2);
      expect(await w!.page.locator("#links").textContent()).toContain("related · 0.75");
      await shot(w!.page, "memories-detail-laptop");

      await w!.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: srv.url });
      await w!.page.click("#copy");
      await w!.page.waitForFunction(() => document.querySelector("#copied")?.textContent === "copied");
      expect(await w!.page.evaluate(() => navigator.clipboard.readText())).toContain(ids.m0.slice(0, 8));

      // A link opens the other memory.
      await w!.page.click(`#links a[data-id="${ids.m1}"]`);
      await w!.page.waitForFunction(() => (window as any).__memories.details === 2);
      expect(await w!.page.locator("#detail .short-id").textContent()).toBe(ids.m1.slice(0, 8));

      // Edit: content, project, type; the embedding is recomputed (the vector row changes).
      const seq = (await dbRow<{ seq: number }>(srv.services, "SELECT seq FROM memories WHERE id = ?", [ids.m1]))!.seq;
      const vec = async () => JSON.stringify(await storedVector(srv.services, seq));
      const v0 = await vec();
      await w!.page.click("#edit");
      await w!.page.fill("#edit-form textarea", "Edited: **ports** for the staging database");
      await w!.page.fill("#edit-form input[name=project]", "ops");
      await w!.page.selectOption("#edit-form select[name=memory_type]", "decisions");
      await w!.page.click("#save");
      await w!.page.waitForFunction(() => (window as any).__memories.details === 3);
      expect(await w!.page.locator("#content strong").textContent()).toBe("ports");
      const row = await dbRow(srv.services, "SELECT content, project, memory_type FROM memories WHERE id = ?", [ids.m1]);
      expect(row).toEqual({ content: "Edited: **ports** for the staging database", project: "ops", memory_type: "decisions" });
      expect(await vec()).not.toBe(v0);

      // Delete asks first: Cancel keeps it, Delete removes it.
      await w!.page.click("#delete");
      expect(await w!.page.locator("#confirm").isVisible()).toBe(true);
      await w!.page.click("#confirm-cancel");
      expect(await dbRow(srv.services, "SELECT 1 AS one FROM memories WHERE id = ?", [ids.m1])).toBeDefined();
      await w!.page.click("#delete");
      const before = await renders();
      await w!.page.click("#confirm-ok");
      await rendered(before + 1);
      expect(await dbRow(srv.services, "SELECT 1 AS one FROM memories WHERE id = ?", [ids.m1])).toBeUndefined();
      expect(await w!.page.locator("#detail").isHidden()).toBe(true);
      await expectClean();
    },
    SLOW,
  );

  test.skipIf(!hasChromium)(
    "bulk delete shows the count of the filtered selection and asks first",
    async () => {
      await open("/memories?project=infra&type=knowledge");
      const expected = SEED.filter((m) => m.project === "infra" && m.type === "knowledge").length;
      expect(await w!.page.locator("#count").textContent()).toContain(`${expected} memories`);
      await w!.page.click("#bulk-delete");
      await w!.page.waitForSelector("#confirm[open]");
      expect(await w!.page.locator("#confirm-title").textContent()).toBe(`Delete ${expected} memories?`);
      expect(await w!.page.locator("#confirm-text").textContent()).toContain("every memory matching project infra, type knowledge");
      expect(await w!.page.locator("#more-filters").getAttribute("open")).not.toBeNull();
      await shot(w!.page, "memories-bulk-confirm");
      await w!.page.click("#confirm-cancel");
      const total = async () => (await dbRow<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memories"))!.n;
      expect(await total()).toBe(N);
      await w!.page.click("#bulk-delete");
      await w!.page.waitForSelector("#confirm[open]");
      const before = await renders();
      await w!.page.click("#confirm-ok");
      await rendered(before + 1);
      expect(await total()).toBe(N - expected);
      expect(await w!.page.locator("#status").textContent()).toBe(`Deleted ${expected} memories.`);
      await expectClean();
    },
    SLOW,
  );

  test.skipIf(!hasChromium)(
    "on a phone: no sideways scroll; the detail covers the list",
    async () => {
      await open("/memories", VIEWPORTS.phone);
      await shot(w!.page, "memories-phone");
      await expectClean();
      await w!.page.locator("#list li[data-index]").first().click();
      await w!.page.waitForFunction(() => (window as any).__memories.details === 1);
      await shot(w!.page, "memories-detail-phone");
      await expectClean();
    },
    SLOW,
  );
});

describe("token prompt", () => {
  test.skipIf(!hasChromium)(
    "from another host: asks with Cancel and Retry, stores the token only once accepted, never in the URL",
    async () => {
      // The browser reaches the server through 127.0.0.2 only by a proxy; instead the page is
      // served normally and the API is made to refuse tokenless requests by a route rewrite.
      await open("/memories", VIEWPORTS.laptop);
      await w!.context.close();
      w = await watchedPage(browser!, srv.url, VIEWPORTS.laptop);
      // Requests without the right token get the server's real 401 (fetched from a non-loopback peer).
      await w.context.route(/\/memories\/(list|facets)/, async (route) => {
        const headers = route.request().headers();
        const res = await requestFrom("127.0.0.2", route.request().url(), { headers: headers.authorization ? { authorization: headers.authorization } : {} });
        await route.fulfill({ status: res.status, headers: { "content-type": "application/json" }, body: res.body });
      });
      await w.page.goto(`${srv.url}/memories?token=wrong-token`);
      expect(new URL(w.page.url()).searchParams.has("token")).toBe(false);
      await w.page.waitForSelector("#memsvc-token-dialog[open]");
      expect(await w.page.evaluate(() => localStorage.getItem("memsvc.token"))).toBeNull();
      expect(await w.page.locator("#memsvc-token-cancel").isVisible()).toBe(true);
      await shot(w.page, "token-prompt");
      await w.page.fill("#memsvc-token-dialog input", "still-wrong");
      await w.page.click("#memsvc-token-ok");
      await w.page.waitForSelector("#memsvc-token-dialog[open]");
      expect(await w.page.evaluate(() => localStorage.getItem("memsvc.token"))).toBeNull();
      await w.page.fill("#memsvc-token-dialog input", srv.token);
      await w.page.click("#memsvc-token-ok");
      await w.page.waitForFunction(() => (window as any).__memories?.renders >= 1);
      expect(await w.page.evaluate(() => localStorage.getItem("memsvc.token"))).toBe(srv.token);
      expect(w.page.url()).not.toContain(srv.token);
      expect(w.referers).toEqual([]);
      w.errors = w.errors.filter((e) => !e.includes("401"));
      expect(w.errors).toEqual([]);
    },
    SLOW,
  );
});

describe("feedback marks in the memory browser", () => {
  test.skipIf(!hasChromium)(
    "memories marked wrong or outdated by feedback carry a badge, the Review filter finds them, and a review clears the badge",
    async () => {
      for (const [key, kind] of [
        ["m5", "wrong"],
        ["m7", "outdated"],
        ["m9", "wrong"],
      ] as const) {
        expect((await postJson(`${srv.url}/feedback`, { id: ids[key], kind, note: `${kind} by test` })).status).toBe(200);
      }
      expect((await postJson(`${srv.url}/memory/review`, { id: ids.m9, action: "retire" })).status).toBe(200);
      await open();
      // Unfiltered: the badges sit on the marked rows only (m9 is retired, not waiting for review).
      const badged = (sel: string) => w!.page.$$eval(`#list li[data-index]:has(${sel})`, (lis) => lis.map((li) => li.id.slice(2)));
      expect((await badged(".mark.needs-review")).sort()).toEqual([ids.m5, ids.m7].sort());
      expect(await badged(".mark.retired")).toEqual([ids.m9]);
      expect(await w!.page.locator(`#m-${ids.m5} .mark.needs-review`).getAttribute("title")).toContain("wrong");

      // The Review filter: only those two, in the address bar too.
      await w!.page.click("#more-filters summary");
      let before = await renders();
      await w!.page.selectOption("select[name=review]", "1");
      await rendered(before + 1);
      expect(await rows()).toBe(2);
      expect(await w!.page.locator("#count").textContent()).toContain("2 memories");
      expect(new URL(w!.page.url()).searchParams.get("review")).toBe("1");
      await shot(w!.page, "memories-review");

      // Settling one from its detail clears its badge at once; a reload no longer lists it.
      await w!.page.locator(`#m-${ids.m5}`).click();
      await w!.page.waitForSelector("#review:not([hidden])");
      before = await w!.page.evaluate(() => (window as any).__memories.feedback ?? 0);
      await w!.page.locator("#review button", { hasText: "Review done" }).click();
      await w!.page.waitForFunction((k) => (window as any).__memories.feedback > k, before);
      await w!.page.waitForSelector("#review[hidden]", { state: "attached" });
      expect(await w!.page.locator(`#m-${ids.m5} .mark`).count()).toBe(0);
      expect(await w!.page.locator(`#m-${ids.m7} .mark.needs-review`).count()).toBe(1);
      await w!.context.close();

      // A bookmarked review view at phone width: one row left, badge visible, nothing overflows.
      await open("/memories?review=1", VIEWPORTS.phone);
      expect(await rows()).toBe(1);
      expect(await w!.page.locator(`#m-${ids.m7} .mark.needs-review`).isVisible()).toBe(true);
      expect(await w!.page.locator("select[name=review]").inputValue()).toBe("1");
      await expectClean();
    },
    SLOW,
  );
});
