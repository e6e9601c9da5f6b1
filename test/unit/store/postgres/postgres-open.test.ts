import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getTableConfig } from "drizzle-orm/pg-core";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../../../src/config";
import { openPostgres, PgUnavailableError, type PgHandle } from "../../../../src/store/postgres/open";
import { pgStorage } from "../../../../src/store/postgres/storage";
import { PG_MIGRATIONS } from "../../../../src/store/postgres/migrations";
import { dbRows, numberPlaceholders } from "../../../helpers/engine";
import { createTestDatabase, realServerUrl, sharedPgUrl, TEST_DB_PASSWORD } from "../../../helpers/pg-server";
import { startRelay } from "../../../helpers/tcp-relay";
import { makeServices } from "../../../helpers/services";
import { storageFailure } from "../../../../src/store/failures";
import { BUN, childEnv, freePort, ROOT, run, startProcess, tempHome } from "../../../helpers/process";

// The PostgreSQL engine's base, against PostgreSQL with pgvector over TCP (the
// real server MEMSVC_TEST_PG_URL names, else PGlite): runs in the sqlite suite too.

let url = "";
let schemaCounter = 0;
const handles: PgHandle[] = [];
const freshSchema = () => `open_${process.pid}_${++schemaCounter}`;
function open(schema = freshSchema(), u = url): PgHandle {
  const h = openPostgres({ url: u, schema, pool: 4, connectTimeoutS: 5 });
  handles.push(h);
  return h;
}

/** A handle that has connected and migrated (store methods get this from pgStorage; raw handles must ask). */
async function opened(schema = freshSchema()): Promise<PgHandle> {
  const h = open(schema);
  await h.ready();
  return h;
}

beforeAll(async () => {
  url = await sharedPgUrl();
}, 180_000);

afterAll(async () => {
  await Promise.all(handles.map((h) => h.close()));
});

const now = 1_700_000_000_000;
const memory = (id: string, content: string, extra: Record<string, unknown> = {}) => ({
  id,
  content,
  memoryType: "fact",
  createdAt: now,
  updatedAt: now,
  refreshedAt: now,
  ...extra,
});

describe("migration", () => {
  test("creates every table the drizzle schema describes, with the same columns; opening again changes nothing", async () => {
    const schema = freshSchema();
    const h = open(schema);
    await h.ready();
    const columns = async () => {
      const rows = await h.sql`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ${schema} ORDER BY table_name, column_name`;
      return rows.map((r: { table_name: string; column_name: string }) => `${r.table_name}.${r.column_name}`);
    };
    const found: string[] = await columns();
    const described = Object.values(h.t)
      .flatMap((table) => {
        const c = getTableConfig(table);
        expect(c.schema).toBe(schema);
        return c.columns.map((col) => `${c.name}.${col.name}`);
      })
      .sort();
    expect(found).toEqual([...new Set(described)].sort());
    // Every table the SQLite engine has, except vector_changes (see 0001_init.sql).
    for (const name of [
      "memories",
      "memory_vec",
      "links",
      "memory_tags",
      "segments",
      "memory_events",
      "meta",
      "recall_sessions",
      "recall_shown",
      "recall_topics",
      "embedder_calibration",
      "nightly_runs",
      "memory_primary_domain",
      "distill_dropped",
      "memory_history",
      "memory_anchors",
    ]) {
      expect(found.some((c) => c.startsWith(`${name}.`))).toBe(true);
    }
    const [v] = await h.sql.unsafe(`SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`);
    expect(Number(v.value)).toBe(PG_MIGRATIONS.at(-1)!.version);
    await h.close();

    // 0001 uses plain CREATE TABLE: running it twice would fail, so a clean second open means it did not run again.
    const again = open(schema);
    await again.ready();
    expect(
      await (async () => {
        const rows =
          await again.sql`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ${schema} ORDER BY table_name, column_name`;
        return rows.map((r: { table_name: string; column_name: string }) => `${r.table_name}.${r.column_name}`);
      })(),
    ).toEqual(found);
  });

  test("two handles opening one schema at once migrate it once", async () => {
    const schema = freshSchema();
    const a = open(schema);
    const b = open(schema);
    await Promise.all([a.ready(), b.ready(), a.ready()]);
    const rows = await a.sql.unsafe(`SELECT key, value FROM ${schema}.meta`);
    expect(rows.map((r: any) => [r.key, r.value])).toEqual([["schema_version", String(PG_MIGRATIONS.at(-1)!.version)]]);
    const [ext] = await a.sql`SELECT extversion FROM pg_extension WHERE extname = 'vector'`;
    expect(ext.extversion).toMatch(/^\d+\.\d+/);
  });

  test("two schemas in one database are separate stores", async () => {
    const a = await opened();
    const b = await opened();
    await a.orm.insert(a.t.memories).values(memory("m-a", "only in a"));
    await b.orm.insert(b.t.memories).values(memory("m-b", "only in b"));
    expect((await a.orm.select().from(a.t.memories)).map((r) => r.id)).toEqual(["m-a"]);
    expect((await b.orm.select().from(b.t.memories)).map((r) => r.id)).toEqual(["m-b"]);
  });

  test("a schema name that is not a plain identifier is refused before any SQL", () => {
    expect(() => openPostgres({ url, schema: "x; DROP TABLE y" })).toThrow(/plain identifier/);
    expect(() => openPostgres({ url, schema: "Upper" })).toThrow(/plain identifier/);
  });
});

describe("errors and secrets", () => {
  test("location hides the password", () => {
    const h = open();
    expect(url).toContain(TEST_DB_PASSWORD);
    expect(h.location).not.toContain(TEST_DB_PASSWORD);
    expect(h.location).toMatch(/^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+$/);
  });

  test("an unreachable database: a clear error naming the location, never the password", async () => {
    const port = await closedPort();
    const h = open(freshSchema(), `postgres://memsvc:${TEST_DB_PASSWORD}@127.0.0.1:${port}/memsvc`);
    const err = await h.ready().then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(PgUnavailableError);
    expect(err.message).toContain(`cannot reach PostgreSQL at postgres://memsvc:***@127.0.0.1:${port}/memsvc`);
    expect(err.message).not.toContain(TEST_DB_PASSWORD);
    expect(err.details).toEqual({ reason: "unreachable" });
  });

  describe("a database without pgvector", () => {
    // A database without the extension that memsvc cannot create it in: on
    // the real server one owned by a role that is no superuser, else a PGlite
    // started without pgvector; reached through a relay, so stop() loses it.
    let bare: { url: string; stop(): void };
    beforeAll(async () => {
      if (realServerUrl) {
        const db = await createTestDatabase("memsvc_bare", { vector: false });
        const relay = await startRelay(db.url);
        bare = { url: relay.url, stop: () => void relay.cut() };
      } else {
        const { startPglite } = await import("../../../helpers/pglite");
        bare = await startPglite({ vector: false });
      }
    }, 180_000);
    afterAll(() => bare?.stop());

    test("says pgvector is missing and how to install it", async () => {
      const h = open(freshSchema(), bare.url);
      const err = await h.ready().then(
        () => null,
        (e) => e,
      );
      expect(err).toBeInstanceOf(PgUnavailableError);
      expect(err.message).toMatch(/has no pgvector extension .*install pgvector 0\.8\.0 or later/);
      expect(err.message).not.toContain(TEST_DB_PASSWORD);
      expect(err.details).toEqual({ reason: "no_pgvector" });
      // Nothing half-made: the failed migration rolled back.
      const [row] = await h.sql`SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = ${h.schema}`;
      expect(row.n).toBe(0);
    });

    test("losing the database mid-run is a storage failure (503 unreachable), not a crash", async () => {
      const h = open(freshSchema(), bare.url);
      expect((await h.sql`SELECT 1 AS one`)[0].one).toBe(1);
      bare.stop();
      await Bun.sleep(300);
      const err = await h.sql`SELECT 1 AS one`.then(
        () => null,
        (e) => e,
      );
      expect(err).not.toBeNull();
      expect(storageFailure(err)?.details).toEqual({ reason: "unreachable" });
    });
  });
});

describe("triggers kept from the SQLite engine", () => {
  test("link_count follows links, also when a linked memory is deleted", async () => {
    const h = await opened();
    const { memories, links } = h.t;
    await h.orm.insert(memories).values([memory("a", "alpha"), memory("b", "beta"), memory("c", "gamma")]);
    await h.orm.insert(links).values([
      { fromId: "a", toId: "b", relationship: "related", createdAt: now },
      { fromId: "a", toId: "c", relationship: "related", createdAt: now },
    ]);
    const counts = async () => Object.fromEntries((await h.orm.select({ id: memories.id, n: memories.linkCount }).from(memories)).map((r) => [r.id, r.n]));
    expect(await counts()).toEqual({ a: 2, b: 1, c: 1 });
    await h.orm.delete(memories).where(eq(memories.id, "b"));
    expect(await counts()).toEqual({ a: 1, c: 1 });
    await h.orm.delete(links);
    expect(await counts()).toEqual({ a: 0, c: 0 });
  });

  test("the primary domain is the highest-weight tag, ties by byte order", async () => {
    const h = await opened();
    const { memories, memoryTags, memoryPrimaryDomain } = h.t;
    await h.orm.insert(memories).values([memory("a", "alpha"), memory("b", "beta")]);
    const domains = async () => Object.fromEntries((await h.orm.select().from(memoryPrimaryDomain)).map((r) => [r.memoryId, r.domain]));
    await h.orm.insert(memoryTags).values([
      { memoryId: "a", tag: "db", weight: 0.5 },
      { memoryId: "a", tag: "api", weight: 0.9 },
      // Byte order puts "Zeta" before "alpha" (a locale collation would not).
      { memoryId: "b", tag: "alpha", weight: 1 },
      { memoryId: "b", tag: "Zeta", weight: 1 },
    ]);
    expect(await domains()).toEqual({ a: "api", b: "Zeta" });
    await h.orm.update(memoryTags).set({ weight: 2 }).where(eq(memoryTags.tag, "db"));
    expect(await domains()).toEqual({ a: "db", b: "Zeta" });
    await h.orm.delete(memoryTags).where(eq(memoryTags.tag, "db"));
    expect(await domains()).toEqual({ a: "api", b: "Zeta" });
    await h.orm.delete(memories).where(eq(memories.id, "b"));
    expect(await domains()).toEqual({ a: "api" });
  });
});

describe("search primitives", () => {
  test("full text: a weighted tsvector ranks the stronger content hit first", async () => {
    const h = await opened();
    await h.orm
      .insert(h.t.memories)
      .values([
        memory("strong", "Deploying the billing service: the billing deploy needs the billing migration first"),
        memory("weak", "The release notes mention billing once among many other unrelated topics about caching and logging"),
        memory("none", "Nothing about that here"),
      ]);
    const rows = await h.sql.unsafe(
      `SELECT id, ts_rank(fts, q) AS rank FROM ${h.schema}.memories, websearch_to_tsquery('english', $1) q
        WHERE fts @@ q ORDER BY rank DESC`,
      ["billing deploys"],
    );
    // "deploys" stems to "deploy": porter-like stemming as SQLite's FTS5 table.
    expect(rows.map((r: any) => r.id)).toEqual(["strong"]);
    const any = await h.sql.unsafe(`SELECT id FROM ${h.schema}.memories, websearch_to_tsquery('english', $1) q WHERE fts @@ q ORDER BY ts_rank(fts, q) DESC`, [
      "billing",
    ]);
    expect(any.map((r: any) => r.id)).toEqual(["strong", "weak"]);
    const plan = (await h.sql.begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      return tx.unsafe(`EXPLAIN SELECT id FROM ${h.schema}.memories WHERE fts @@ websearch_to_tsquery('english', 'billing')`);
    })) as { "QUERY PLAN": string }[];
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("memories_fts");
  });

  test("vectors: <=> finds the nearest through the HNSW index", async () => {
    const h = await opened();
    const { memories, memoryVec } = h.t;
    const ids = ["x", "y", "z", "w"];
    const inserted = await h.orm
      .insert(memories)
      .values(ids.map((id) => memory(id, `memory ${id}`)))
      .returning({ seq: memories.seq, id: memories.id });
    const basis = (i: number, tilt = 0) => Array.from({ length: 384 }, (_, k) => (k === i ? 1 : k === i + 1 ? tilt : 0));
    await h.orm.insert(memoryVec).values(inserted.map((r, i) => ({ seq: r.seq, embedding: basis(i * 10) })));
    const query = `[${basis(20, 0.3).join(",")}]`;
    const nearest = (await h.sql.begin(async (tx) => {
      // Four rows: the planner would scan them; the index path is what a large store takes.
      await tx`SET LOCAL enable_seqscan = off`;
      const sqlText = `SELECT m.id, v.embedding <=> $1::vector AS distance FROM ${h.schema}.memory_vec v JOIN ${h.schema}.memories m ON m.seq = v.seq ORDER BY v.embedding <=> $1::vector LIMIT 2`;
      const plan = await tx.unsafe(`EXPLAIN ${sqlText}`, [query]);
      expect(plan.map((r: any) => r["QUERY PLAN"]).join("\n")).toContain("memory_vec_hnsw");
      return tx.unsafe(sqlText, [query]);
    })) as { id: string; distance: number }[];
    expect(nearest[0]!.id).toBe("z");
    expect(nearest[0]!.distance).toBeCloseTo(1 - 1 / Math.sqrt(1.09), 5);
    // Deleting a memory takes its vector (the foreign key cascades).
    await h.orm.delete(memories).where(eq(memories.id, "z"));
    expect((await h.orm.select().from(memoryVec)).length).toBe(3);
  });
});

describe("coordination helpers", () => {
  test("withAdvisoryLock runs in a transaction: a throw rolls back", async () => {
    const h = open();
    await h.ready();
    await expect(
      h.withAdvisoryLock("job", async (tx) => {
        expect(tx.inTransaction).toBe(true);
        await tx.orm.insert(tx.t.memories).values(memory("rolled-back", "never lands"));
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await h.orm.select().from(h.t.memories)).toEqual([]);
    const value = await h.withAdvisoryLock("job", async (tx) => {
      await tx.orm.insert(tx.t.memories).values(memory("kept", "lands"));
      return 7;
    });
    expect(value).toBe(7);
    expect((await h.orm.select().from(h.t.memories)).map((r) => r.id)).toEqual(["kept"]);
    expect(await h.tryAdvisoryLock("job", async () => "ran")).toEqual({ ran: true, value: "ran" });
  });

  test("a lease has one owner until it expires", async () => {
    const h = open();
    expect(await h.lease("nightly", "server-a", 60_000, now)).toBe(true);
    expect(await h.lease("nightly", "server-b", 60_000, now + 1000)).toBe(false);
    expect(await h.lease("nightly", "server-a", 60_000, now + 2000)).toBe(true);
    expect(await h.lease("nightly", "server-b", 60_000, now + 62_001)).toBe(true);
    await h.releaseLease("nightly", "server-a");
    expect(await h.lease("nightly", "server-a", 60_000, now + 63_000)).toBe(false);
    await h.releaseLease("nightly", "server-b");
    expect(await h.lease("nightly", "server-a", 60_000, now + 63_000)).toBe(true);
  });
});

describe("storage", () => {
  test("transaction commits what fn wrote, rolls back on a throw, and a nested one joins", async () => {
    const h = open();
    const storage = pgStorage(h);
    const seen: boolean[] = [];
    await expect(
      storage.transaction(async (tx) => {
        await tx.transaction(async (inner) => {
          seen.push(inner === tx);
        });
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect(seen).toEqual([true]);
    expect(storage.engine).toBe("postgres");
    expect(storage.location).not.toContain(TEST_DB_PASSWORD);
  });

  test("services on postgres: storage works, the tests' SQLite handle throws a clear error", async () => {
    const s = makeServices({ config: { storage: "postgres", database_url: url, database_schema: freshSchema() } });
    try {
      expect(s.storage.engine).toBe("postgres");
      await s.storage.ready();
      expect(() => s.store).toThrow(/no SQLite handle behind this store \(storage "postgres"\)/);
      expect(s.indexState.status).toBe("ready");
      expect(await dbRows(s, "SELECT count(*) AS n FROM memories WHERE id = ?", ["none"])).toEqual([{ n: 0 }]);
      expect(await dbRows(s, "SELECT value FROM meta WHERE key = 'schema_version'")).toEqual([{ value: String(PG_MIGRATIONS.length) }]);
    } finally {
      await s.close();
    }
  });

  for (const engine of ["sqlite", "postgres"] as const) {
    test(`meta and stats on ${engine}`, async () => {
      const s = makeServices({
        config: engine === "sqlite" ? { storage: "sqlite" } : { storage: "postgres", database_url: url, database_schema: freshSchema() },
      });
      try {
        expect(await s.storage.meta.get("test_key")).toBeNull();
        await s.storage.meta.set("test_key", "one");
        await s.storage.meta.set("test_key", "two");
        expect(await s.storage.meta.get("test_key")).toBe("two");
        expect(await dbRows(s, "SELECT value FROM meta WHERE key = ?", ["test_key"])).toEqual([{ value: "two" }]);
        const stats = await s.storage.stats();
        expect(stats).toMatchObject({ memories: 0, links: 0 });
        expect(stats.bytes).toBeGreaterThan(0);
      } finally {
        await s.close();
      }
    });
  }

  test("dbRows speaks to SQLite the same way", async () => {
    const s = makeServices({ config: { storage: "sqlite" } });
    try {
      expect(await dbRows(s, "SELECT count(*) AS n FROM memories WHERE id = ?", ["none"])).toEqual([{ n: 0 }]);
    } finally {
      await s.close();
    }
  });

  test("? placeholders become $n outside quotes only", () => {
    expect(numberPlaceholders("SELECT '?' AS q, x FROM t WHERE a = ? AND b IN (?, ?)")).toBe("SELECT '?' AS q, x FROM t WHERE a = $1 AND b IN ($2, $3)");
  });
});

describe("config", () => {
  const home = (config: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), "memsvc-pgcfg-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify(config));
    return dir;
  };

  test("sqlite by default; postgres from config.json, env or flag, with schema and pool", () => {
    const plain = loadConfig({ MEMSVC_HOME: home({}) });
    expect(plain.storage).toBe("sqlite");
    expect(plain.database).toEqual({ url: null, location: null, schema: "memsvc", pool: 10 });
    const fromFile = loadConfig({
      MEMSVC_HOME: home({ storage: "postgres", database_url: "postgres://u:pw@db.example:5432/team", database_schema: "team_a", database_pool: 20 }),
    });
    expect(fromFile.storage).toBe("postgres");
    expect(fromFile.database).toEqual({
      url: "postgres://u:pw@db.example:5432/team",
      location: "postgres://u:***@db.example:5432/team",
      schema: "team_a",
      pool: 20,
    });
    const fromEnv = loadConfig({
      MEMSVC_HOME: home({}),
      MEMSVC_STORAGE: "postgres",
      MEMSVC_DATABASE_URL: "postgresql://u:pw@h/db?sslmode=require&password=pw2",
      MEMSVC_DATABASE_SCHEMA: "s2",
      MEMSVC_DATABASE_POOL: "3",
    });
    expect(fromEnv.database.schema).toBe("s2");
    expect(fromEnv.database.pool).toBe(3);
    expect(fromEnv.database.location).not.toContain("pw");
    const fromFlag = loadConfig(
      { MEMSVC_HOME: home({ storage: "postgres" }), MEMSVC_DATABASE_URL: "postgres://a@h/env" },
      { databaseUrl: "postgres://a@h/flag" },
    );
    expect(fromFlag.database.url).toBe("postgres://a@h/flag");
  });

  test("bad values: clear errors that never repeat the URL", () => {
    expect(() => loadConfig({ MEMSVC_HOME: home({ storage: "postgres" }) })).toThrow(
      /storage is "postgres" but no database URL is set: set MEMSVC_DATABASE_URL/,
    );
    expect(() => loadConfig({ MEMSVC_HOME: home({ storage: "mysql" }) })).toThrow(/"storage" must be "sqlite" or "postgres"/);
    expect(() => loadConfig({ MEMSVC_HOME: home({ database_schema: "Bad-Name" }) })).toThrow(/"database_schema" must be a plain schema name/);
    expect(() => loadConfig({ MEMSVC_HOME: home({}), MEMSVC_DATABASE_SCHEMA: "1abc" })).toThrow(/MEMSVC_DATABASE_SCHEMA must be a plain schema name/);
    expect(() => loadConfig({ MEMSVC_HOME: home({}), MEMSVC_DATABASE_POOL: "0" })).toThrow(/MEMSVC_DATABASE_POOL must be a positive integer/);
    const leak = (() => {
      try {
        loadConfig({ MEMSVC_HOME: home({}), MEMSVC_DATABASE_URL: "mysql://u:hunter2@h/db" });
        return "no error";
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(leak).toMatch(/MEMSVC_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(leak).not.toContain("hunter2");
  });
});

/** A port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

describe("memsvc server on postgres", () => {
  test("an unreachable database stops start-up with one line, password hidden", async () => {
    const home = tempHome();
    const port = await closedPort();
    const r = await run(
      [BUN, "src/main.ts", "server", "--port", String(await freePort()), "--database-url", `postgres://memsvc:${TEST_DB_PASSWORD}@127.0.0.1:${port}/team`],
      childEnv(home, { MEMSVC_STORAGE: "postgres" }),
      ROOT,
      60_000,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`memsvc server: cannot reach PostgreSQL at postgres://memsvc:***@127.0.0.1:${port}/team`);
    expect(r.stderr + r.stdout).not.toContain(TEST_DB_PASSWORD);
  }, 90_000);

  test("starts on a reachable database and /health answers from it, password hidden", async () => {
    const home = tempHome();
    const port = await freePort();
    const server = await startProcess(
      [BUN, "src/main.ts", "server", "--port", String(port)],
      childEnv(home, { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: url, MEMSVC_DATABASE_SCHEMA: freshSchema() }),
      port,
      ROOT,
      60_000,
    );
    try {
      const h = (await (await fetch(`${server.url}/health`)).json()) as Record<string, unknown>;
      expect(h).toMatchObject({ status: "ok", memories: 0, links: 0 });
      expect(JSON.stringify(h)).not.toContain(TEST_DB_PASSWORD);
      expect(server.stderr()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(home .*, postgres postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+,/);
      expect(server.stderr()).not.toContain(TEST_DB_PASSWORD);
    } finally {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
    }
  }, 90_000);
});
