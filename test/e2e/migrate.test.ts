import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "bun";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openPostgres, type PgHandle } from "../../src/store/postgres/open";
import { pgStorage } from "../../src/store/postgres/storage";
import { writeCorpus } from "../helpers/memory-corpus";
import { createTestDatabase, realServerUrl, TEST_DB_PASSWORD } from "../helpers/pg-server";
import { BUN, childEnv, ROOT, run, tempHome } from "../helpers/process";

/**
 * `memsvc migrate` end to end: a 4k-memory laptop store (realistic texts,
 * tags, links, versions, anchors, events, vectors) into PostgreSQL (a fresh
 * database on the real server MEMSVC_TEST_PG_URL names, else a PGlite of its
 * own), killed mid-way, resumed, and compared by export.
 * 4k in batches of 100 gives the kill forty batches to land in, as 10k in
 * 250s did, at less than half the time (the longest test of the suite: ~57 s
 * at 10k, against a CI budget of 15 minutes).
 */
const N = 4_000;
let pg: { url: string; stop?: () => void };
beforeAll(async () => {
  if (realServerUrl) pg = await createTestDatabase("memsvc_migrate");
  else pg = await (await import("../helpers/pglite")).startPglite();
  // PGlite (with pgvector) can take longer than bun's 5 s hook default to start on a loaded 2-core machine.
}, 60_000);
afterAll(() => pg?.stop?.());

/** An export's lines without its time stamp, sorted: equal data on both engines gives equal lists (row order within a kind is engine-defined). */
const lines = (file: string) =>
  readFileSync(file, "utf8")
    .replace(/"exported_at":"[^"]*",/, "")
    .split("\n")
    .filter(Boolean)
    .sort();

test("a 4k-memory store migrates to PostgreSQL losslessly; killed mid-way it resumes from the target's cursor and ends identical; a re-run is a no-op", async () => {
  const home = tempHome();
  const corpus = join(home, "corpus.jsonl");
  const counts = writeCorpus(corpus, N);
  // The laptop side is SQLite whichever engine the suite runs on.
  const env = childEnv(home, { MEMSVC_STORAGE: "sqlite" });
  const im = await run([BUN, "src/main.ts", "import", corpus], env, ROOT, 300_000);
  expect(im.code).toBe(0);
  expect(im.stdout).toContain(`imported ${N} memories (${N} vectors reused`);
  mkdirSync(join(home, "identity", "agents", "bot-1"), { recursive: true });
  writeFileSync(join(home, "identity", "persona.md"), "# Persona\nCareful.");
  writeFileSync(join(home, "identity", "agents", "bot-1", "style.md"), "Terse.");
  const url = pg.url;
  const schema = "migrate_e2e";
  const args = [BUN, "src/main.ts", "migrate", "--to", url, "--schema", schema, "--batch", "100"];

  // First run: killed (SIGKILL, no chance to clean up) once a third of the memories are in.
  const first = spawn(args, { env, cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  let err = "";
  const decoder = new TextDecoder();
  const reader = first.stderr.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    err += decoder.decode(next.value);
    if (/^3\d% memories/m.test(err)) {
      first.kill("SIGKILL");
      break;
    }
  }
  await first.exited;
  expect(first.signalCode).toBe("SIGKILL");
  // Not a TTY: plain progress lines, one per 10% step.
  expect(err).toMatch(new RegExp(`^0% memories: 0/${N} memories`, "m"));
  expect(err).not.toContain("\r");

  const h: PgHandle = openPostgres({ url, schema, pool: 2 });
  const target = pgStorage(h);
  try {
    await h.ready();
    const partial = await target.memories.countMemories();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(N);
    const cursor = JSON.parse((await target.memories.migrateCursor())!);
    expect(cursor).toMatchObject({ table: "memories", complete: false });
    // The cursor and the rows were committed together: it points at the last copied seq.
    expect(cursor.after).toBe(partial);

    const second = await run(args, env, ROOT, 600_000);
    expect(second.stderr + second.stdout).toContain("resuming an interrupted run");
    expect(second.code).toBe(0);
    expect(second.stdout + second.stderr).toContain(
      `migrated ${N} memories, ${counts.links} links, ${counts.history} earlier versions, ${counts.anchors} anchors`,
    );
    // The password never shows; identity files go into the database, where servers on PostgreSQL read them.
    expect(second.stdout + second.stderr).not.toContain(TEST_DB_PASSWORD);
    expect(second.stdout).toContain("copied 2 identity sections into the database (persona, agents/bot-1/style)");

    const third = await run(args, env, ROOT, 120_000);
    expect(third.code).toBe(0);
    expect(third.stdout + third.stderr).toContain("nothing to do");
    expect(await target.memories.countMemories()).toBe(N);

    // Export from both engines: equal, vectors included (float4 values survive the text round trip).
    const fromSqlite = join(home, "sqlite.jsonl");
    const ex = await run([BUN, "src/main.ts", "export", "--vectors", "--out", fromSqlite], env, ROOT, 300_000);
    expect(ex.code).toBe(0);
    const fromPg = join(home, "pg.jsonl");
    const pgEnv = { ...env, MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: url, MEMSVC_DATABASE_SCHEMA: schema };
    const exPg = await run([BUN, "src/main.ts", "export", "--vectors", "--out", fromPg], pgEnv, ROOT, 300_000);
    expect(exPg.code).toBe(0);
    expect(exPg.stderr).toContain(`exported ${N} memories`);
    const a = lines(fromSqlite);
    const b = lines(fromPg);
    expect(b.length).toBe(a.length);
    expect(b).toEqual(a);
    // seq survives (ordering and the vector keys depend on it), and new memories continue after it.
    const seqs = await h.sql.unsafe(`SELECT min(seq)::int AS lo, max(seq)::int AS hi, count(*)::int AS n FROM ${schema}.memories`);
    expect(seqs[0]).toEqual({ lo: 1, hi: N, n: N });
    // The secondary indexes, dropped for the bulk copy, were built once at its end (also after the
    // kill and resume): the same set a fresh schema has, and none left to build.
    const indexes = async (sch: string) =>
      (
        (await h.sql.unsafe(`SELECT indexname AS n, replace(indexdef, $1, 'S') AS d FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname`, [sch])) as {
          n: string;
          d: string;
        }[]
      ).map((r) => r.d.replace(` ${sch}.`, " S."));
    const fresh = openPostgres({ url, schema: `${schema}_fresh`, pool: 1 });
    await fresh.ready();
    await fresh.close();
    const copied = await indexes(schema);
    expect(copied).toEqual(await indexes(`${schema}_fresh`));
    expect(copied.some((d) => d.includes("USING hnsw (embedding vector_cosine_ops)"))).toBe(true);
    expect(await h.sql.unsafe(`SELECT key FROM ${schema}.meta WHERE key = 'migrate_indexes'`)).toHaveLength(0);
    const next = await h.sql.unsafe(`SELECT nextval(pg_get_serial_sequence('${schema}.memories', 'seq'))::int AS v`);
    expect(next[0].v).toBe(N + 1);
    // The copy ends with VACUUM (ANALYZE) (PGlite has no autovacuum: nothing else would have run it):
    // planner statistics for the copied rows, and pages marked all-visible.
    const [stats] = await h.sql.unsafe(`SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = $1 AND tablename = 'memories'`, [schema]);
    expect(stats.n).toBeGreaterThan(0);
    const [vis] = await h.sql.unsafe(`SELECT relallvisible::int AS v, relpages::int AS p FROM pg_class WHERE oid = '${schema}.memories'::regclass`);
    expect(vis.v).toBeGreaterThan(0);
  } finally {
    await h.close();
  }
}, 900_000);

test("on PostgreSQL, backup is a logical export that memsvc import restores into an empty schema; import refuses a schema with memories", async () => {
  const home = tempHome();
  writeCorpus(join(home, "corpus.jsonl"), 150, 5);
  const pgEnv = (schema: string) => childEnv(home, { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: pg.url, MEMSVC_DATABASE_SCHEMA: schema });
  const im = await run([BUN, "src/main.ts", "import", join(home, "corpus.jsonl")], pgEnv("bk_a"), ROOT, 120_000);
  expect(im.code).toBe(0);
  expect(im.stdout).toContain("imported 150 memories (150 vectors reused");
  const again = await run([BUN, "src/main.ts", "import", join(home, "corpus.jsonl")], pgEnv("bk_a"), ROOT, 120_000);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/already holds 150 memories/);
  expect(again.stderr).not.toContain(TEST_DB_PASSWORD);

  const bk = await run([BUN, "src/main.ts", "backup"], pgEnv("bk_a"), ROOT, 120_000);
  expect(bk.code).toBe(0);
  expect(bk.stdout).toMatch(/backup written: .*memsvc-.*\.jsonl .*a logical export: restore with memsvc import/);
  const file = bk.stdout.match(/backup written: (\S+)/)![1];
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const restored = await run([BUN, "src/main.ts", "import", file], pgEnv("bk_b"), ROOT, 120_000);
  expect(restored.code).toBe(0);
  expect(restored.stdout).toContain("150 vectors reused, 0 re-embedded");
  const a = join(home, "a.jsonl");
  const b = join(home, "b.jsonl");
  expect((await run([BUN, "src/main.ts", "export", "--vectors", "--out", a], pgEnv("bk_a"), ROOT, 120_000)).code).toBe(0);
  expect((await run([BUN, "src/main.ts", "export", "--vectors", "--out", b], pgEnv("bk_b"), ROOT, 120_000)).code).toBe(0);
  expect(lines(b)).toEqual(lines(a));
  // An unreachable database: one clear line, no file left behind, no password.
  const down = await run(
    [BUN, "src/main.ts", "backup", "--out", join(home, "never.jsonl")],
    childEnv(home, { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: "postgres://u:secret-pw@127.0.0.1:1/db" }),
    ROOT,
    60_000,
  );
  expect(down.code).toBe(1);
  expect(down.stderr).toMatch(/memsvc backup: cannot reach PostgreSQL/);
  expect(down.stderr).not.toContain("secret-pw");
  expect(existsSync(join(home, "never.jsonl"))).toBe(false);
}, 300_000);

test("migrate refuses a bad URL or schema with a clear message and never prints a password", async () => {
  const home = tempHome();
  const env = childEnv(home, { MEMSVC_STORAGE: "sqlite" });
  const bad = await run([BUN, "src/main.ts", "migrate", "--to", "mysql://u:secret-pw@host/db"], env);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain("postgres://");
  expect(bad.stderr + bad.stdout).not.toContain("secret-pw");
  const schema = await run([BUN, "src/main.ts", "migrate", "--to", "postgres://u:secret-pw@127.0.0.1:1/db", "--schema", "Bad-Name"], env);
  expect(schema.code).not.toBe(0);
  expect(schema.stderr).toContain("--schema");
  writeCorpus(join(home, "small.jsonl"), 5);
  expect((await run([BUN, "src/main.ts", "import", join(home, "small.jsonl")], env)).code).toBe(0);
  const down = await run([BUN, "src/main.ts", "migrate", "--to", "postgres://u:secret-pw@127.0.0.1:1/db"], env, ROOT, 60_000);
  expect(down.code).toBe(1);
  expect(down.stderr).toMatch(/cannot reach PostgreSQL/);
  expect(down.stderr + down.stdout).not.toContain("secret-pw");
}, 120_000);
