import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { ingestMemory } from "../../src/core/ingest";
import { onPostgres } from "../helpers/engine";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";
import { makeServices } from "../helpers/services";
import { adminToken } from "../helpers/tokens";

let server: Running | null = null;
afterEach(() => {
  server?.proc.kill();
  server = null;
});

test("memories imported by another process are found by vector search in the running server at once", async () => {
  // An export to import: made in a separate home.
  const source = makeServices();
  await ingestMemory(source, { content: "Stripe webhook signatures are verified with the endpoint secret before parsing", project: "billing" });
  await ingestMemory(source, { content: "The ledger service rounds currency with banker's rounding at settlement", project: "billing" });
  await source.close();
  const file = join(tempHome(), "export.jsonl");
  expect((await run([BUN, "src/main.ts", "export", "--out", file], childEnv(source.config.home))).code).toBe(0);

  const home = tempHome();
  const port = await freePort();
  server = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], childEnv(home), port);
  const token = await adminToken(home);
  const get = async (path: string) => (await fetch(`${server!.url}${path}`, { headers: { Authorization: `Bearer ${token}` } })).json();
  const health = await get("/health");
  expect(health.index).toBe("ready");
  expect(health.index_vectors).toBe(0);

  // Written by a second process while the server runs.
  const im = await run([BUN, "src/main.ts", "import", file], childEnv(home));
  expect(im.code).toBe(0);
  const found = await get(`/search?query=${encodeURIComponent("verify stripe webhook signatures")}`);
  const hit = found.results.find((r: { content: string }) => r.content.startsWith("Stripe webhook"));
  expect(hit?.matched_by).toContain("vector");
  // SQLite: the in-memory index took them in on that search. PostgreSQL (pgvector answers the
  // search directly) counts its vectors for /health at most once a second
  // (PG_VECTOR_COUNT_REFRESH_MS), so the count may lag by that much.
  let vectors = (await get("/health")).index_vectors;
  for (let i = 0; onPostgres && vectors !== 2 && i < 50; i++) {
    await Bun.sleep(100);
    vectors = (await get("/health")).index_vectors;
  }
  expect(vectors).toBe(2);
}, 60_000);
