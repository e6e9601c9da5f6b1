import { afterEach, expect, test } from "bun:test";
import { deleteMemory, updateMemory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { search } from "../../../../src/core/search";
import { onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// Two Services on one home are two connections to one database, exactly as two server processes are.
const PG = onPostgres;
/** The SQLite engine's in-memory index, its change-log sync and index file: nothing of it exists on PostgreSQL. */
const sqliteOnly = (name: string, fn: () => Promise<void>) => test.skipIf(PG)(`${name} [SQLite engine's in-memory index]`, fn);
const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});
const pair = () => {
  const a = makeServices();
  const b = makeServices({ home: a.config.home });
  open.push(a, b);
  return [a, b] as const;
};
const idOf = (r: { id: string | null }) => r.id!;

test("another connection's inserts, edits, project moves and deletes reach this server's vector search at once", async () => {
  const [server, other] = pair();
  await ingestMemory(server, { content: "The release train for atlas ships every tuesday", project: "atlas" });
  const id = idOf(await ingestMemory(other, { content: "Kafka consumer lag alerts page the on-call after ten minutes", project: "infra" }));
  // SQLite: not in the in-memory index until the server next searches (the catch-up is on the search path).
  if (!PG) expect(server.index.size).toBe(1);
  let hits = await search(server, { query: "Kafka consumer lag alerts" });
  const hit = hits.results.find((r) => r.id === id);
  expect(hit?.matched_by).toContain("vector");
  if (!PG) expect(server.index.size).toBe(2);

  // Content edit elsewhere: the new vector is what the server finds.
  await updateMemory(other, { id, content: "Redis eviction storms follow a maxmemory policy change", project: "platform" });
  hits = await search(server, { query: "Redis eviction maxmemory policy", project: "platform" });
  expect(hits.results.find((r) => r.id === id)?.matched_by).toContain("vector");
  expect((await search(server, { query: "Redis eviction maxmemory policy", project: "infra" })).results.some((r) => r.id === id)).toBe(false);

  await deleteMemory(other, id);
  hits = await search(server, { query: "Redis eviction maxmemory policy" });
  expect(hits.results.some((r) => r.id === id)).toBe(false);
  if (!PG) expect(server.index.size).toBe(1);
});

sqliteOnly("this connection's own writes are not replayed while no other connection writes", async () => {
  const [server, other] = pair();
  for (let i = 0; i < 5; i++) await ingestMemory(server, { content: `note number ${i} about the billing webhook retries` });
  await search(server, { query: "billing webhook" });
  const cursor = server.indexState.cursor;
  expect(cursor).toBeGreaterThanOrEqual(5);
  // The other connection sees the server's writes too (it is the same log).
  await search(other, { query: "billing webhook" });
  expect(other.index.size).toBe(5);
  expect(other.indexState.cursor).toBe(cursor);
});

sqliteOnly("a large store saves its index to a file and the next start restores it, with other writes replayed", async () => {
  const first = makeServices({ indexBackgroundAbove: 20 });
  open.push(first);
  for (let i = 0; i < 30; i++)
    await ingestMemory(first, { content: `note ${i}: the payments worker retries webhook ${i} with backoff`, project: i % 2 ? "a" : "b" });
  const home = first.config.home;
  await first.close();
  open.splice(open.indexOf(first), 1);
  const file = `${first.store.file}.vindex`;
  expect(await Bun.file(file).exists()).toBe(true);
  expect((await import("node:fs")).statSync(file).mode & 0o777).toBe(0o600);

  // Written while no server runs: the log carries it to the restored index.
  const writer = makeServices({ home, indexBackgroundAbove: 1_000_000 });
  const added = idOf(await ingestMemory(writer, { content: "Terraform state lives in the ops bucket with object locking", project: "infra" }));
  await writer.close();

  const second = makeServices({ home, indexBackgroundAbove: 20 });
  open.push(second);
  // Loaded after start-up returns (the server is listening by then): BM25 answers meanwhile.
  expect(second.indexState.status).toBe("loading");
  const early = await search(second, { query: "terraform state bucket locking" });
  expect(early.results.find((r) => r.id === added)?.matched_by).toEqual(["bm25"]);
  await second.indexState.ready;
  expect(second.logs.some((l) => /vector index ready from its file: 31 vectors/.test(l.message))).toBe(true);
  expect(second.index.size).toBe(31);
  const hits = await search(second, { query: "terraform state bucket locking" });
  expect(hits.results.find((r) => r.id === added)?.matched_by).toContain("vector");
});

sqliteOnly("an index file that disagrees with the database is ignored", async () => {
  const first = makeServices({ indexBackgroundAbove: 5 });
  for (let i = 0; i < 8; i++) await ingestMemory(first, { content: `fact ${i} about the cache layer eviction policy` });
  const home = first.config.home;
  const dbFile = first.store.file;
  await first.close();
  // A row vanishes behind the log's back (as a restored backup would look).
  const { openStore } = await import("../../../../src/store/sqlite");
  const db = openStore(dbFile);
  db.sqlite.run("DROP TRIGGER vector_changes_delete");
  db.sqlite.run("DELETE FROM memories WHERE seq = 3");
  db.close();
  const second = makeServices({ home, indexBackgroundAbove: 5 });
  open.push(second);
  await second.indexState.ready;
  expect(second.logs.some((l) => /saved vector index holds 8 vectors, the database 7/.test(l.message))).toBe(true);
  expect(second.index.size).toBe(7);
  expect(second.index.has(3)).toBe(false);
});

sqliteOnly("an index restored from its file answers exactly as one loaded from the database; a damaged file is ignored", async () => {
  const first = makeServices({ indexBackgroundAbove: 20 });
  open.push(first);
  const projects = ["a", "b", null];
  for (let i = 0; i < 40; i++)
    await ingestMemory(first, {
      content: `note ${i}: ${["webhook retries", "cache eviction", "deploy pipeline", "schema migration"][i % 4]} in service ${i % 7}`,
      project: projects[i % 3],
    });
  const home = first.config.home;
  const file = `${first.store.file}.vindex`;
  await first.close();
  open.splice(open.indexOf(first), 1);
  const probes = [new Float32Array(384), new Float32Array(384)];
  probes[0][3] = 1;
  for (let i = 0; i < 384; i++) probes[1][i] = Math.sin(i);
  const answers = async (s: TestServices) => {
    await s.indexState.ready;
    return Promise.all([null, "a", "b"].flatMap((p) => probes.map((v) => s.storage.search.nearest(v, 10, p))));
  };
  // From the database (no file), the reference.
  const { rmSync, readFileSync, writeFileSync } = await import("node:fs");
  const saved = readFileSync(file);
  rmSync(file);
  const fromDb = makeServices({ home, indexBackgroundAbove: 20 });
  open.push(fromDb);
  const reference = await answers(fromDb);
  expect(fromDb.logs.some((l) => /vector index ready: 40 vectors/.test(l.message))).toBe(true);
  await fromDb.close();
  open.splice(open.indexOf(fromDb), 1);
  // From the file: the same hits, the same similarities.
  writeFileSync(file, saved, { mode: 0o600 });
  const fromFile = makeServices({ home, indexBackgroundAbove: 20 });
  open.push(fromFile);
  await fromFile.indexState.ready;
  // The file keeps int8 rows only: the float vectors (the exact similarity) are filled from vec0
  // between requests (until then a search reads the few it needs itself).
  for (let i = 0; i < 200 && !fromFile.logs.some((l) => /float vectors filled from vec0/.test(l.message)); i++) await Bun.sleep(10);
  expect(fromFile.logs.some((l) => /vector index: 40 float vectors filled from vec0/.test(l.message))).toBe(true);
  expect((fromFile.index as unknown as { floatsMissing: number }).floatsMissing).toBe(0);
  expect(fromFile.logs.some((l) => /vector index ready from its file: 40 vectors/.test(l.message))).toBe(true);
  expect(await answers(fromFile)).toEqual(reference);
  await fromFile.close();
  open.splice(open.indexOf(fromFile), 1);
  // Cut short, or another format: loaded from the database instead, with the same answers.
  for (const damaged of [saved.subarray(0, saved.length - 100), Buffer.concat([Buffer.from("not an index\n"), saved.subarray(13)])]) {
    writeFileSync(file, damaged, { mode: 0o600 });
    const again = makeServices({ home, indexBackgroundAbove: 20 });
    open.push(again);
    expect(await answers(again)).toEqual(reference);
    expect(again.logs.some((l) => /vector index ready: 40 vectors/.test(l.message))).toBe(true);
    await again.close();
    open.splice(open.indexOf(again), 1);
  }
});

sqliteOnly("word weights count the store's memories while the index loads in the background, not the vectors loaded so far", async () => {
  const first = makeServices({ indexBackgroundAbove: 20 });
  open.push(first);
  for (let i = 0; i < 30; i++)
    await ingestMemory(first, { content: `note ${i}: the payments worker retries webhook ${i % 5} with backoff`, project: i % 2 ? "a" : "b" });
  await ingestMemory(first, { content: "Terraform state lives in the ops bucket with object locking" });
  const home = first.config.home;
  await first.close();
  open.splice(open.indexOf(first), 1);
  const { weighTerms } = await import("../../../../src/core/recall/terms");
  const second = makeServices({ home, indexBackgroundAbove: 20 });
  open.push(second);
  expect(second.indexState.status).toBe("loading");
  expect(second.index.size).toBe(0);
  expect(second.index.memories).toBe(31);
  const during = await weighTerms(second, ["terraform", "webhook", "payments"]);
  await second.indexState.ready;
  expect(second.index.size).toBe(31);
  expect(second.index.memories).toBe(31);
  expect(await weighTerms(second, ["terraform", "webhook", "payments"])).toEqual(during);
  // Once complete, a write moves the count at once (no refresh interval).
  await ingestMemory(second, { content: "Kafka consumer lag pages the on-call after ten minutes" });
  expect(second.index.memories).toBe(32);
});
