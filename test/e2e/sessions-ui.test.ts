import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { ARTIFACTS, hasChromium, launchBrowser } from "../helpers/browser";
import { overflow, shot, VIEWPORTS, watchedPage, type Watched } from "../helpers/page-check";
import { postJson, startServer, type TestServer } from "../helpers/server";

const SLOW = 90_000;
let browser: Browser | null = null;
let srv: TestServer;
let w: Watched | null = null;
const ids: Record<string, string> = {};

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  srv = await startServer();
  const ingest = async (key: string, content: string, project: string) =>
    (ids[key] = (await (await postJson(`${srv.url}/ingest`, { content, project })).json()).id);
  await ingest("pg", "The staging Postgres database listens on port 5433 behind pgbouncer.", "infra");
  await ingest("pool", "The staging Postgres database pool is pgbouncer in transaction mode on port 6432.", "infra");
  await ingest("deploy", "Production deploys run through the GitHub Actions workflow deploy.yml with a manual approval.", "infra");
  const recall = (session: string, prompt: string) =>
    postJson(`${srv.url}/recall-index`, { session_id: session, prompt, project: "infra", agent: "claude-code" });
  await recall("sess-ui-1", "which port does the staging postgres database listen on?");
  await recall("sess-ui-1", "how do production deploys get approved in the workflow?");
  await recall("sess-ui-2", "what mode does the staging postgres pool run in?");
  await postJson(`${srv.url}/recall/used`, { session_id: "sess-ui-1", ids: [ids.pg] });
});
afterEach(async () => {
  await w?.context.close();
  w = null;
  await srv.stop();
});

const sessionsDrawn = () => w!.page.waitForFunction(() => (window as any).__sessionsPage?.sessions > 0);

async function expectClean() {
  expect(w!.outside).toEqual([]);
  expect(w!.errors).toEqual([]);
  expect(w!.referers).toEqual([]);
  expect(await overflow(w!.page)).toBeLessThanOrEqual(0);
}

describe("/sessions in headless Chromium", () => {
  test.skipIf(!hasChromium)(
    "sessions newest first; a session's prompts with what they received, what was used, the near misses and tokens; links into the browser",
    async () => {
      w = await watchedPage(browser!, srv.url, VIEWPORTS.laptop);
      await w.page.goto(`${srv.url}/sessions`);
      await sessionsDrawn();
      expect(await w.page.title()).toBe("Sessions · memsvc");
      expect(await w.page.locator(".memsvc-nav a[aria-current=page]").textContent()).toBe("Sessions");
      expect(await w.page.locator("#sessions li[data-session]").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.session))).toEqual([
        "sess-ui-2",
        "sess-ui-1",
      ]);
      const first = w.page.locator('#sessions li[data-session="sess-ui-1"]');
      expect(await first.textContent()).toContain("2 prompts");
      expect(await first.textContent()).toContain("1 used");
      await first.click();
      await w.page.waitForFunction(() => (window as any).__sessionsPage.prompts === 2);
      const prompts = w.page.locator("#prompts li.prompt");
      expect(await prompts.count()).toBe(2);
      // Oldest first, as the session went.
      expect(await prompts.nth(0).locator(".text").textContent()).toBe("which port does the staging postgres database listen on?");
      const pg = prompts.nth(0).locator(`.mem[data-id="${ids.pg}"]`);
      expect(await pg.locator(".badge.used").count()).toBe(1);
      expect(await pg.locator(".badge").nth(1).textContent()).toMatch(/^\d+ tokens$/);
      expect(await pg.locator("a").getAttribute("href")).toBe(`/memories#${ids.pg}`);
      expect(await pg.locator(".parts").textContent()).toContain("full text");
      expect(await w.page.locator("#session-totals").textContent()).toMatch(/2 prompts · \d+ tokens injected · \d+ memories injected, 1 used · claude-code/);
      await shot(w.page, "sessions-laptop");
      await expectClean();
    },
    SLOW,
  );

  test.skipIf(!hasChromium)(
    "feedback from the page: wrong takes the memory out of the next identical prompt's block",
    async () => {
      w = await watchedPage(browser!, srv.url, VIEWPORTS.laptop);
      await w.page.goto(`${srv.url}/sessions`);
      await sessionsDrawn();
      await w.page.locator('#sessions li[data-session="sess-ui-1"]').click();
      await w.page.waitForFunction(() => (window as any).__sessionsPage.prompts === 2);
      w.page.once("dialog", (d) => d.accept("the port moved to 5434"));
      await w.page.locator(`#prompts li.prompt >> nth=0 >> .mem[data-id="${ids.pg}"] button[data-kind="wrong"]`).click();
      await w.page.waitForFunction(() => (window as any).__sessionsPage.feedback === 1);
      expect(await w.page.locator(`.mem[data-id="${ids.pg}"] .done`).first().textContent()).toContain("wrong: out of recall");
      const again = await (
        await postJson(`${srv.url}/recall-index`, {
          session_id: "sess-ui-3",
          prompt: "which port does the staging postgres database listen on?",
          project: "infra",
        })
      ).json();
      expect(again.shown).not.toContain(ids.pg);
      const detail = await (await fetch(`${srv.url}/memories/detail?id=${ids.pg}`)).json();
      expect(detail.feedback.wrong.note).toBe("the port moved to 5434");
      await expectClean();
    },
    SLOW,
  );

  test.skipIf(!hasChromium)(
    "on a phone: one pane at a time, no sideways scroll, back returns to the list",
    async () => {
      w = await watchedPage(browser!, srv.url, VIEWPORTS.phone);
      await w.page.goto(`${srv.url}/sessions`);
      await sessionsDrawn();
      await expectClean();
      await w.page.locator('#sessions li[data-session="sess-ui-1"]').click();
      await w.page.waitForFunction(() => (window as any).__sessionsPage.prompts === 2);
      expect(await w.page.locator("#sessions-pane").isVisible()).toBe(false);
      expect(await w.page.locator("#prompts-pane").isVisible()).toBe(true);
      await shot(w.page, "sessions-phone");
      await expectClean();
      await w.page.locator("#back").click();
      expect(await w.page.locator("#sessions-pane").isVisible()).toBe(true);
    },
    SLOW,
  );

  test.skipIf(!hasChromium)(
    "memory browser: feedback bar and review marks (outdated with its note, retire and unretire)",
    async () => {
      w = await watchedPage(browser!, srv.url, VIEWPORTS.laptop);
      await w.page.goto(`${srv.url}/memories#${ids.pool}`);
      await w.page.waitForFunction(() => (window as any).__memories?.details >= 1);
      expect(await w.page.locator("#review").isVisible()).toBe(false);
      w.page.once("dialog", (d) => d.accept("pool moved to session mode"));
      await w.page.locator('#feedback button[data-kind="outdated"]').click();
      await w.page.waitForFunction(() => (window as any).__memories.feedback === 1);
      await w.page.waitForFunction(() => !document.querySelector("#review")!.hasAttribute("hidden"));
      expect(await w.page.locator("#review").textContent()).toContain("Reported outdated");
      expect(await w.page.locator("#review").textContent()).toContain("pool moved to session mode");
      await w.page.locator('#feedback button[data-action="retire"]').click();
      await w.page.waitForFunction(() => (window as any).__memories.feedback === 2);
      await w.page.waitForFunction(() => document.querySelector("#review")!.textContent!.includes("Retired"));
      const search = await (await fetch(`${srv.url}/search?query=${encodeURIComponent("staging postgres pool transaction mode")}`)).json();
      expect(search.results.map((r: { id: string }) => r.id)).not.toContain(ids.pool);
      await w.page.locator("#review button", { hasText: "Unretire" }).click();
      await w.page.waitForFunction(() => (window as any).__memories.feedback === 3);
      const back = await (await fetch(`${srv.url}/search?query=${encodeURIComponent("staging postgres pool transaction mode")}`)).json();
      expect(back.results.map((r: { id: string }) => r.id)).toContain(ids.pool);
      await expectClean();
    },
    SLOW,
  );
});
