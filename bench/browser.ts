/**
 * Memory browser benchmark (`bun bench/browser.ts`): a store of 100k
 * generated memories (bench/lib/seed.ts), a real server process on loopback,
 * and headless Chromium on /memories. Times, inside the page (performance.now()
 * from the action to the frame's data being in the DOM):
 *   first_page  navigation start -> first list page drawn (HTML, scripts, API)
 *   search      submitting a query -> its results drawn
 *   filter      changing the type filter -> the filtered list drawn
 *   detail      clicking a row -> the detail drawn (Markdown rendered)
 * and, over plain HTTP, GET /memories/list for the first page and for a page
 * deep in the keyset walk. Prints one JSON object (also written to
 * bench/results/). Target: each browser figure < 300 ms at p95.
 *
 * Env: BENCH_MEMORIES (default 100000), BENCH_RUNS (default 8), BENCH_KEEP=1 keeps the
 * seeded home, BENCH_HOME=<dir> reuses one (seeding 100k takes minutes).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathsFor } from "../src/config";
import { VERSION } from "../src/version";
import { NoteGenerator } from "./lib/corpus";
import { seedStore } from "./lib/seed";
import { ROOT, serverCommand, spawnServer } from "./lib/server";
import { round, summarize } from "./lib/stats";

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const TARGET_MS = 300;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const QUERIES = [
  "deploy latency regression",
  "redis timeout under load",
  "postgres migration",
  "kafka consumer lag",
  "auth token refresh",
  "cache eviction",
  "release rollback",
  "flaky test retry",
];
const TYPES = ["decisions", "learnings", "experience", "knowledge"];

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log(JSON.stringify({ bench: "browser", skipped: `no Chromium at ${CHROMIUM} (apt-get install chromium)` }));
    return;
  }
  const reuse = process.env.BENCH_HOME && existsSync(pathsFor(process.env.BENCH_HOME).db) ? process.env.BENCH_HOME : null;
  const home = reuse ?? mkdtempSync(join(tmpdir(), "memsvc-bench-browser-"));
  const result: Record<string, unknown> = {
    bench: "browser",
    version: VERSION,
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load_avg_before: loadavg().map((x) => round(x)) },
  };
  const { chromium } = await import("playwright-core");
  let server: Awaited<ReturnType<typeof spawnServer>> | null = null;
  let browser: Awaited<ReturnType<typeof chromium.launch>> | null = null;
  try {
    if (reuse) {
      log(`reusing ${home}`);
      result.seed = { reused: home };
    } else {
      log(`seeding ${MEMORIES} memories`);
      const seed = seedStore(pathsFor(home).db, new NoteGenerator(42), MEMORIES);
      result.seed = { memories: seed.total, links: seed.links, seconds: round(seed.seconds) };
    }
    server = await spawnServer(home, serverCommand("source"));
    const url = server.url;

    // The list endpoint alone: the first page, and a page 200 pages (10k rows) into the keyset walk.
    const http = async (qs: string) => {
      const t = performance.now();
      const res = await fetch(`${url}/memories/list?${qs}`);
      const body = (await res.json()) as { next_cursor: string | null; items: unknown[] };
      if (res.status !== 200) throw new Error(`GET /memories/list?${qs} answered ${res.status}`);
      return { ms: performance.now() - t, body };
    };
    await http("limit=50");
    const first: number[] = [];
    for (let i = 0; i < RUNS; i++) first.push((await http("limit=50")).ms);
    let cursor: string | null = null;
    for (let i = 0; i < 200; i++) cursor = (await http(`limit=50${cursor ? `&cursor=${cursor}` : ""}`)).body.next_cursor;
    const deep: number[] = [];
    for (let i = 0; i < RUNS; i++) deep.push((await http(`limit=50&cursor=${cursor}`)).ms);
    result.http = { first_page_ms: summarize(first), page_201_ms: summarize(deep) };

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
    });
    const times: Record<string, number[]> = { first_page: [], search: [], filter: [], detail: [] };
    for (let run = 0; run < RUNS + 1; run++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${url}/memories`);
      await page.waitForFunction(() => (window as any).__memories?.renders >= 1);
      const firstMs = await page.evaluate(() => (window as any).__memories.drawnAt as number);
      if (run === RUNS) {
        // Where the first page's time went, for the last run: each file's and the list's response end.
        result.first_page_breakdown_ms = await page.evaluate(() => ({
          html_response_end: Math.round((performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).responseEnd),
          dom_content_loaded: Math.round((performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).domContentLoadedEventEnd),
          resources: performance
            .getEntriesByType("resource")
            .map((r) => `${new URL(r.name).pathname.split("?")[0]} ${Math.round(r.startTime)}-${Math.round((r as PerformanceResourceTiming).responseEnd)}`),
        }));
      }
      if ((await page.locator("#list li[data-index]").count()) !== 50) throw new Error("the first page did not draw 50 rows");

      // Each action starts inside the page and is timed to when its result is in the DOM.
      const search = await page.evaluate(
        (q) =>
          new Promise<number>((resolve) => {
            const hook = (window as any).__memories;
            const n = hook.renders;
            const input = document.querySelector("#q") as HTMLInputElement;
            const t0 = performance.now();
            input.value = q;
            input.form!.requestSubmit();
            const poll = () => (hook.renders > n && hook.idle ? resolve(hook.drawnAt - t0) : setTimeout(poll, 1));
            poll();
          }),
        QUERIES[run % QUERIES.length],
      );
      const filter = await page.evaluate(
        (type) =>
          new Promise<number>((resolve) => {
            const hook = (window as any).__memories;
            const n = hook.renders;
            (document.querySelector("#q") as HTMLInputElement).value = "";
            const sel = document.querySelector("select[name=type]") as HTMLSelectElement;
            const t0 = performance.now();
            sel.value = type;
            sel.dispatchEvent(new Event("input", { bubbles: true }));
            const poll = () => (hook.renders > n && hook.idle ? resolve(hook.drawnAt - t0) : setTimeout(poll, 1));
            poll();
          }),
        TYPES[run % TYPES.length],
      );
      const detail = await page.evaluate(
        (index) =>
          new Promise<number>((resolve) => {
            const hook = (window as any).__memories;
            const n = hook.details;
            const rows = document.querySelectorAll("#list li[data-index]");
            const t0 = performance.now();
            (rows[index % rows.length] as HTMLElement).click();
            const poll = () => (hook.details > n ? resolve(hook.detailAt - t0) : setTimeout(poll, 1));
            poll();
          }),
        run * 7,
      );
      if (run > 0) {
        // The first round warms the server's page cache and the browser's.
        times.first_page.push(firstMs);
        times.search.push(search);
        times.filter.push(filter);
        times.detail.push(detail);
      }
      await context.close();
    }
    const browserMs = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, summarize(v)]));
    result.browser_ms = browserMs;
    result.target = {
      ms: TARGET_MS,
      at: MEMORIES,
      met: Object.values(browserMs).every((s) => s.p95 < TARGET_MS),
    };
    result.machine = { ...(result.machine as object), load_avg_after: loadavg().map((x) => round(x)) };
  } finally {
    await browser?.close();
    await server?.stop();
    if (process.env.BENCH_KEEP === "1" || reuse) log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
  const json = JSON.stringify(result, null, 2);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results", `browser-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
  console.log(json);
}

await main();
