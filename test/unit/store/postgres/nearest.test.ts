// Vector search within a project on PostgreSQL (src/store/postgres/nearest.ts):
// a small group (a project, or the memories of no project) is scored exactly,
// a large one goes to HNSW. Both must give the brute-force top k, ties by seq
// ascending, and each must run the branch its size calls for.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Storage } from "../../../../src/core/storage";
import { DIMENSIONS } from "../../../../src/embed/types";
import { nearestStatement } from "../../../../src/store/postgres/nearest";
import { openPostgres, type PgHandle } from "../../../../src/store/postgres/open";
import { pgSearch } from "../../../../src/store/postgres/search";
import { pgStorage } from "../../../../src/store/postgres/storage";
import { sharedPgUrl } from "../../../helpers/pg-server";

const SMALL = 60;
const NONE = 40;
const LARGE = 700;
/** Groups up to this size are scanned exactly in this test's store (the default is far larger). */
const EXACT_ROWS = 100;
const K = 10;

let storage: Storage;
let h: PgHandle;
const schema = `nearest_${process.pid}`;
/** seq -> [group, unit vector] */
const rows = new Map<number, [string, Float32Array]>();

let state = 12345;
const rand = () => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 2 ** 32;
};
function unit(): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = rand() - 0.5;
    n += v[i] * v[i];
  }
  for (let i = 0; i < v.length; i++) v[i] /= Math.sqrt(n);
  return v;
}

beforeAll(async () => {
  const url = await sharedPgUrl();
  storage = pgStorage(openPostgres({ url, schema, pool: 2 }));
  await storage.ready();
  h = openPostgres({ url, schema, pool: 2 });
  await h.ready();
  const sql = (h as unknown as { sql: import("bun").SQL }).sql;
  // One vector repeated in the small project: 15 exact ties around the 10th place.
  const tie = unit();
  const groups = [
    ...Array.from({ length: LARGE }, () => "large"),
    ...Array.from({ length: SMALL }, (_, i) => (i % 4 === 0 ? "small:tie" : "small")),
    ...Array.from({ length: NONE }, () => ""),
  ].sort(() => rand() - 0.5);
  let seq = 0;
  for (const g of groups) {
    seq++;
    const project = g === "" ? null : g.replace(":tie", "");
    const v = g === "small:tie" ? tie : unit();
    rows.set(seq, [project ?? "", v]);
    await sql.unsafe(
      `INSERT INTO ${schema}.memories(seq, id, content, memory_type, project, created_at, updated_at, refreshed_at) VALUES ($1, $2, 'x', 'note', $3, 0, 0, 0)`,
      [seq, `m${seq}`, project],
    );
    await sql.unsafe(`INSERT INTO ${schema}.memory_vec(seq, embedding) VALUES ($1, $2::vector)`, [seq, `[${Array.from(v).join(",")}]`]);
  }
  await sql.unsafe(`ANALYZE ${schema}.memories`);
}, 120_000);

afterAll(async () => {
  await h?.close();
  await storage?.close();
});

/** Cosine similarity in float64 over every row of the group, best first, ties by seq. */
function bruteForce(q: Float32Array, group: string, k: number): number[] {
  const scored: { seq: number; s: number }[] = [];
  for (const [seq, [g, v]] of rows) {
    if (g !== group) continue;
    let d = 0;
    for (let i = 0; i < q.length; i++) d += q[i] * v[i];
    scored.push({ seq, s: d });
  }
  scored.sort((a, b) => b.s - a.s || a.seq - b.seq);
  return scored.slice(0, k).map((x) => x.seq);
}

/** Which branches of the statement read vectors: "exact" (the group's rows) and/or "hnsw" (the index scan with the project filter). */
async function branches(project: string, efSearch: number): Promise<Set<string>> {
  const [settings, query] = nearestStatement(schema, unit(), K, project, { exactRows: EXACT_ROWS, efSearch }).split(/;\n/);
  const sql = (h as unknown as { sql: import("bun").SQL }).sql;
  const plan = await sql.begin(async (tx) => {
    await tx.unsafe(settings);
    return tx.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${query}`);
  });
  const ran = new Set<string>();
  const readsVectors = (n: any): boolean => (n["Relation Name"] === "memory_vec" && (n["Actual Loops"] ?? 0) > 0) || (n.Plans ?? []).some(readsVectors);
  const find = (n: any): any => (n["Node Type"] === "Append" ? n : (n.Plans ?? []).map(find).find(Boolean));
  const append = find((plan[0]["QUERY PLAN"] as any)[0].Plan);
  // The statement's two branches, in its order: the group's rows scored one by one, then HNSW.
  const [exact, hnsw] = append.Plans.filter((n: any) => n["Parent Relationship"] === "Member");
  if (readsVectors(exact)) ran.add("exact");
  if (readsVectors(hnsw)) ran.add("hnsw");
  return ran;
}

describe("PostgreSQL vector search within a project", () => {
  test("a small project and the memories of no project: the exact top k, ties by seq, even with HNSW's candidate list at k", async () => {
    // ef_search k: HNSW alone would miss some of them; the exact scan cannot.
    const store = pgSearch(h, { exactRows: EXACT_ROWS, efSearch: K });
    for (let i = 0; i < 8; i++) {
      const q = unit();
      for (const [project, group] of [
        ["small", "small"],
        ["", ""],
      ] as const) {
        const got = await store.nearest(q, K, project);
        expect(got.map((r) => r.seq)).toEqual(bruteForce(q, group, K));
      }
    }
    // The tied vector itself as the query: 15 rows at similarity 1, the 10 lowest seqs win.
    const tied = [...rows].filter(([, [g]]) => g === "small");
    const tieVector = tied.map(([, [, v]]) => v).find((v) => tied.filter(([, [, w]]) => w === v).length > 1)!;
    const got = await store.nearest(tieVector, K, "small");
    const expected = bruteForce(tieVector, "small", K);
    expect(got.map((r) => r.seq)).toEqual(expected);
    expect(got.every((r) => r.similarity > 0.9999)).toBe(true);
    expect(await branches("small", K)).toEqual(new Set(["exact"]));
    expect(await branches("", K)).toEqual(new Set(["exact"]));
  });

  test("a large project goes to HNSW, which at an ef_search above its size gives the exact top k too", async () => {
    const store = pgSearch(h, { exactRows: EXACT_ROWS, efSearch: 1000 });
    for (let i = 0; i < 8; i++) {
      const q = unit();
      const got = await store.nearest(q, K, "large");
      expect(got.map((r) => r.seq)).toEqual(bruteForce(q, "large", K));
    }
    expect(await branches("large", 1000)).toEqual(new Set(["hnsw"]));
  });

  test("the engine's storage answers a project search exactly with its default threshold", async () => {
    const q = unit();
    const got = await storage.search.nearest(q, K, "large");
    expect(got.map((r) => r.seq)).toEqual(bruteForce(q, "large", K));
  });

  test("a memory moved to another project is found there, by its vector, at once", async () => {
    const sql = (h as unknown as { sql: import("bun").SQL }).sql;
    const [seq, [, v]] = [...rows].find(([, [g]]) => g === "large")!;
    await sql.unsafe(`UPDATE ${schema}.memories SET project = 'moved' WHERE seq = $1`, [seq]);
    const store = pgSearch(h, { exactRows: EXACT_ROWS });
    expect((await store.nearest(v, K, "moved")).map((r) => r.seq)).toEqual([seq]);
    expect((await store.nearest(v, K, "large")).map((r) => r.seq)).not.toContain(seq);
    await sql.unsafe(`UPDATE ${schema}.memories SET project = 'large' WHERE seq = $1`, [seq]);
    expect(await store.nearest(v, K, "moved")).toEqual([]);
  });
});
