import { afterEach, describe, expect, test } from "bun:test";
import { countSession, deleteMemory, fetchMemory, resolveMemory, updateMemory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { effectiveStrength } from "../../../../src/core/memories";
import { DECAY_HALF_LIFE_DAYS, USE_BOOST } from "../../../../src/core/memories/tuning";
import { dbRow, dbRows, onPostgres, onSqlite } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

let s: TestServices;
afterEach(async () => {
  await s?.close();
});

async function ingest(content: string, extra: Record<string, unknown> = {}) {
  const r = await ingestMemory(s, { content, ...extra });
  if (r.id === null) throw new Error("unexpected skip");
  return r.id;
}

// Full text: SQLite's FTS5 table, PostgreSQL's generated tsvector column.
const FTS_ROWS = onPostgres ? "(SELECT count(*) FROM memories WHERE fts IS NOT NULL)" : "(SELECT count(*) FROM memories_fts)";
const rowCounts = async () =>
  (await dbRow<{ m: number; f: number; v: number; l: number; t: number }>(
    s,
    `SELECT (SELECT count(*) FROM memories) m, ${FTS_ROWS} f, (SELECT count(*) FROM memory_vec) v, (SELECT count(*) FROM links) l, (SELECT count(*) FROM memory_tags) t`,
  ))!;
const ftsMatches = async (word: string) =>
  (await dbRow<{ n: number }>(
    s,
    onPostgres ? "SELECT count(*) n FROM memories WHERE fts @@ to_tsquery('english', ?)" : "SELECT count(*) n FROM memories_fts WHERE memories_fts MATCH ?",
    [word],
  ))!.n;
/** The stored vector, comparable across reads (a BLOB on SQLite, pgvector's text on PostgreSQL). */
const storedVector = async () => {
  const e = (await dbRow<{ e: unknown }>(s, "SELECT embedding e FROM memory_vec"))!.e;
  return e instanceof Uint8Array ? Buffer.from(e).toString("hex") : String(e);
};
// The in-memory vector index is SQLite's; PostgreSQL searches with pgvector in the database.
const expectIndexSize = (n: number) => {
  if (onSqlite) expect(s.index.size).toBe(n);
};

describe("ingest", () => {
  test("stores content, type, project, provenance and one FTS row and one vector", async () => {
    s = makeServices();
    const id = await ingest("Use pnpm, not npm, in the web repo", { project: "web", memory_type: "decisions", source_agent: "laptop" });
    const row = await resolveMemory(s, id);
    expect(row.memoryType).toBe("decisions");
    expect(row.project).toBe("web");
    expect(row.sourceAgent).toBe("laptop");
    expect(row.privacy).toBe("WORK");
    expect(await rowCounts()).toMatchObject({ m: 1, f: 1, v: 1 });
    expectIndexSize(1);
  });

  test("legacy memory types map to the current ones; default is experience", async () => {
    s = makeServices();
    const map: Record<string, string> = { episode: "experience", lesson: "learnings", fact: "knowledge", decision: "decisions", KNOWLEDGE: "knowledge" };
    for (const [legacy, current] of Object.entries(map)) {
      const id = await ingest(`memory typed ${legacy} number ${Math.random()}`, { memory_type: legacy });
      expect((await resolveMemory(s, id)).memoryType).toBe(current);
    }
    expect((await resolveMemory(s, await ingest("no type given here"))).memoryType).toBe("experience");
  });

  test("rejects bad input with a message naming the field, writing nothing", async () => {
    s = makeServices();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{}, /content/],
      [{ content: "   " }, /content/],
      [{ content: 42 }, /content/],
      [{ content: "x", memory_type: "opinion" }, /memory_type/],
      [{ content: "x", session_date: "yesterday" }, /session_date/],
      [{ content: "x", session_date: "2026-02-30" }, /session_date/],
      [{ content: "x", project: ["a"] }, /project/],
      [{ content: "x", privacy: "SECRET" }, /privacy/],
      [{ content: "x".repeat(100_001) }, /content/],
    ];
    for (const [input, field] of bad) {
      const err = await ingestMemory(s, input as never).then(
        () => null,
        (e) => e,
      );
      expect(err?.code).toBe("invalid");
      expect(err.message).toMatch(field);
    }
    expect((await rowCounts()).m).toBe(0);
  });

  test("dedups on source_session, also under concurrency", async () => {
    s = makeServices();
    const results = await Promise.all([1, 2, 3].map((i) => ingestMemory(s, { content: `session memory ${i}`, source_session: "sess-1" })));
    expect(results.filter((r) => r.id !== null)).toHaveLength(1);
    const skipped = results.find((r) => r.id === null);
    expect(skipped).toMatchObject({ id: null, skipped: true, existing_count: 1 });
    expect(await countSession(s, "sess-1")).toBe(1);
  });

  test("session_date becomes created_at", async () => {
    s = makeServices();
    const id = await ingest("dated memory", { session_date: "2025-03-04" });
    expect(new Date((await resolveMemory(s, id)).createdAt).toISOString()).toBe("2025-03-04T00:00:00.000Z");
  });
});

describe("ids", () => {
  test("full id, 8-char prefix, unknown, too short, ambiguous", async () => {
    s = makeServices();
    const id = await ingest("prefix target");
    expect((await resolveMemory(s, id)).id).toBe(id);
    expect((await resolveMemory(s, id.slice(0, 8).toUpperCase())).id).toBe(id);
    await expect(resolveMemory(s, "00000000")).rejects.toThrow(/no memory/);
    await expect(resolveMemory(s, id.slice(0, 7))).rejects.toThrow(/8/);
    await expect(resolveMemory(s, "'; DROP TABLE memories; --")).rejects.toThrow(/UUID/);
    // Two memories sharing a prefix: store one with a chosen id.
    const twin = `${id.slice(0, 8)}-ffff-4fff-bfff-ffffffffffff`;
    const [vector] = await s.embedder.embed(["prefix twin"], "document");
    await s.storage.memories.insertMemories([
      {
        id: twin,
        content: "prefix twin",
        memoryType: "knowledge",
        project: null,
        sourceAgent: "test",
        sourceAgentId: null,
        sourceDomain: null,
        sourceSession: null,
        privacy: "WORK",
        createdAt: s.now(),
        updatedAt: s.now(),
        refreshedAt: s.now(),
        strength: 1,
        vector,
        tags: [],
      },
    ]);
    let err: any;
    try {
      await resolveMemory(s, id.slice(0, 8));
    } catch (e) {
      err = e;
    }
    expect(err.code).toBe("conflict");
    expect(err.details.candidates.map((c: { id: string }) => c.id).sort()).toEqual([id, twin].sort());
  });
});

describe("fetch marks used and strengthens; citation", () => {
  test("used_count, strength, memory_events, citation format", async () => {
    s = makeServices();
    const id = await ingest("the deploy key lives in vault", { source_agent: "ci-box", session_date: "2026-01-02" });
    const first = await fetchMemory(s, id.slice(0, 8));
    expect(first.citation).toBe(`(memory ${id.slice(0, 8)}, 2026-01-02, from ci-box)`);
    expect(first.memory.used_count).toBe(1);
    expect(first.memory.strength).toBeCloseTo(1 + USE_BOOST, 5);
    const second = await fetchMemory(s, id);
    expect(second.memory.used_count).toBe(2);
    expect(await dbRows(s, "SELECT count(*) n FROM memory_events WHERE kind = 'used'")).toEqual([{ n: 2 }]);
  });
});

describe("update", () => {
  test("reports before/after, re-embeds on content change, keeps FTS in step", async () => {
    s = makeServices();
    const id = await ingest("redis runs on port 6379", { project: "cache" });
    const before = await storedVector();
    const r = await updateMemory(s, { id, content: "valkey replaced redis on port 6380", memory_type: "fact" });
    expect(r.changes.content).toEqual({ before: "redis runs on port 6379", after: "valkey replaced redis on port 6380" });
    expect(r.changes.memory_type).toEqual({ before: "experience", after: "knowledge" });
    expect(r.changes.project).toBeUndefined();
    expect(await storedVector()).not.toBe(before);
    expect(await ftsMatches("valkey")).toBe(1);
    expect(await ftsMatches("6379")).toBe(0);
  });

  test("nothing to update and bad fields are 400", async () => {
    s = makeServices();
    const id = await ingest("something to update");
    await expect(updateMemory(s, { id })).rejects.toMatchObject({ code: "invalid" });
    await expect(updateMemory(s, { id, content: "" })).rejects.toMatchObject({ code: "invalid" });
    await expect(updateMemory(s, { id, memory_type: "nope" })).rejects.toMatchObject({ code: "invalid" });
  });
});

describe("delete", () => {
  test("removes the memory, its vector, FTS row, tags and every link", async () => {
    s = makeServices();
    const a = await ingest("alpha service owns the queue", { project: "p" });
    const b = await ingest("beta service reads the queue", { project: "p" });
    const c = await ingest("gamma unrelated note about lunch", { project: "p" });
    const link = "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, 1)";
    await dbRows(s, link, [a, b, "depends_on", 0.9]);
    await dbRows(s, link, [c, a, "mentions", 0.5]);
    const links = (await rowCounts()).l;
    expect(links).toBeGreaterThanOrEqual(2);
    const r = await deleteMemory(s, a);
    expect(r.preview).toContain("alpha");
    expect(await rowCounts()).toMatchObject({ m: 2, f: 2, v: 2 });
    expect(await dbRows(s, "SELECT count(*) n FROM links WHERE from_id = ? OR to_id = ?", [a, a])).toEqual([{ n: 0 }]);
    expect(await dbRows(s, "SELECT count(*) n FROM memory_tags WHERE memory_id = ?", [a])).toEqual([{ n: 0 }]);
    expectIndexSize(2);
    // link_count of the other ends went down with the links.
    const linkCounts = await dbRows<{ link_count: number; n: number }>(
      s,
      "SELECT m.link_count, (SELECT count(*) FROM links l WHERE l.from_id = m.id OR l.to_id = m.id) n FROM memories m",
    );
    for (const r of linkCounts) expect(r.link_count).toBe(r.n);
    await expect(deleteMemory(s, a)).rejects.toThrow(/no memory/);
  });
});

describe("decay", () => {
  test("effective strength halves towards the floor with time since refresh", () => {
    const now = Date.UTC(2026, 0, 1);
    const day = 86_400_000;
    expect(effectiveStrength(1, now, now)).toBeCloseTo(1, 6);
    const half = effectiveStrength(1, now - DECAY_HALF_LIFE_DAYS * day, now);
    expect(half).toBeLessThan(0.6);
    expect(half).toBeGreaterThan(0.5);
    expect(effectiveStrength(1, now - 3650 * day, now)).toBeGreaterThan(0.1);
    expect(effectiveStrength(2, now - 10 * day, now)).toBeCloseTo(2 * effectiveStrength(1, now - 10 * day, now), 6);
  });
});

describe("session dedup under concurrency", () => {
  test("two ingests of one session that both passed the early check store one memory (the write checks again)", async () => {
    const own = makeServices();
    try {
      // Both calls wait inside the embedding, after the early check, until both are there.
      const embed = own.embedder.embed.bind(own.embedder);
      let waiting = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      own.embedder.embed = async (...args: Parameters<typeof embed>) => {
        waiting++;
        await gate;
        return embed(...args);
      };
      const a = ingestMemory(own, { content: "Concurrent ingest one: the staging cache is Redis.", source_session: "race" });
      const b = ingestMemory(own, { content: "Concurrent ingest two: the staging queue is SQS.", source_session: "race" });
      while (waiting < 2) await Bun.sleep(1);
      release();
      const results = await Promise.all([a, b]);
      expect(results.filter((r) => "skipped" in r && r.skipped).length).toBe(1);
      expect(await countSession(own, "race")).toBe(1);
    } finally {
      await own.close();
    }
  });
});
