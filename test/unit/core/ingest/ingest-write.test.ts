import { afterEach, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { deriveTags } from "../../../../src/core/memories";
import { dbRows, onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// What one POST /ingest writes, on either engine. On PostgreSQL the memory,
// its vector, its tags and its links go to the database as one message with
// the values inlined (src/store/postgres/ingest-statement.ts): text with
// quotes, backslashes, dollars and non-ASCII must come back as sent.

const NOW = Date.parse("2026-11-28T12:00:00Z");
let s: TestServices;
afterEach(async () => {
  await s?.close();
});

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
};

test("an ingest stores its row, tags and links as sent (quotes, backslashes, dollars, non-ASCII) and links only within its project", async () => {
  s = makeServices({ now: () => NOW });
  const project = `o'brien\\team "x" $1 ü`;
  const text = (n: string) => `Deploy ${n}: the gateway's "retry" path \\ E'x' $$dollar$$ ünï 🚀\nline two of the note about the gateway retry path`;
  const ingest = async (content: string, p: string | null, extra: Record<string, unknown> = {}) => {
    const r = await ingestMemory(s, { content, project: p, source_agent: "agent's \\ one", ...extra });
    if (r.id === null) throw new Error("skipped");
    return r.id;
  };
  const a = await ingestMemory(s, {
    content: text("alpha one"),
    project,
    source_agent: "agent's \\ one",
    source_session: "sess'ion \\ 1",
    memory_type: "decisions",
  });
  if (a.id === null) throw new Error("skipped");
  const b = await ingest(text("alpha two"), project);
  const other = await ingest(text("alpha two"), "elsewhere");
  const twin = await ingest(text("alpha two"), project);
  // No project: no tags derived from one (the statement without its tags part).
  const loose = await ingest("Zucchini lasagna wants fresh basil and slow ovens", null);

  const [row] = await dbRows(
    s,
    "SELECT content, project, memory_type AS type, source_agent AS agent, source_session AS session, created_at AS created FROM memories WHERE id = ?",
    [a.id],
  );
  expect(row).toEqual({ content: text("alpha one"), project, type: "decisions", agent: "agent's \\ one", session: "sess'ion \\ 1", created: NOW });
  const tags = await dbRows<{ tag: string; weight: number }>(s, "SELECT tag, weight FROM memory_tags WHERE memory_id = ? ORDER BY tag", [b]);
  expect(tags.map((t) => ({ tag: t.tag, weight: t.weight }))).toEqual(
    deriveTags(project)
      .map((t) => ({ tag: t.tag, weight: t.weight }))
      .sort((x, y) => (x.tag < y.tag ? -1 : 1)),
  );
  expect((await dbRows(s, "SELECT domain FROM memory_primary_domain WHERE memory_id = ?", [b])).length).toBe(tags.length > 0 ? 1 : 0);

  // b links to a (the only memory of its project before it), weighted by their cosine similarity; the
  // memory of another project links to neither; the twin of b links to both, to b at similarity 1.
  const links = await dbRows<{ f: string; t: string; rel: string; w: number }>(
    s,
    "SELECT from_id AS f, to_id AS t, relationship AS rel, weight AS w FROM links ORDER BY from_id, to_id",
  );
  const [va, vb] = await s.embedder.embed([text("alpha one"), text("alpha two")], "document");
  const of = (id: string) => links.filter((l) => l.f === id).map((l) => ({ t: l.t, rel: l.rel, w: l.w }));
  expect(of(b)).toHaveLength(1);
  expect(of(b)[0].t).toBe(a.id);
  expect(of(b)[0].rel).toBe("related");
  expect(of(b)[0].w).toBeCloseTo(cosine(va, vb), 5);
  expect(of(other)).toEqual([]);
  expect(
    of(twin)
      .map((l) => l.t)
      .sort(),
  ).toEqual([a.id, b].sort());
  expect(of(twin).find((l) => l.t === b)!.w).toBeCloseTo(1, 5);
  const counts = await dbRows<{ id: string; n: number }>(s, "SELECT id, link_count AS n FROM memories");
  const countOf = (id: string) => counts.find((c) => c.id === id)!.n;
  expect([countOf(a.id), countOf(b), countOf(other), countOf(twin), countOf(loose)]).toEqual([2, 2, 0, 2, 0]);
  expect(await dbRows(s, "SELECT content FROM memories WHERE id = ?", [loose])).toEqual([{ content: "Zucchini lasagna wants fresh basil and slow ovens" }]);

  if (onPostgres) {
    // The vector row carries its memory's project (migration 0010's trigger, inside the same statement).
    const vec = await dbRows(s, "SELECT m.id, v.project FROM memory_vec v JOIN memories m ON m.seq = v.seq ORDER BY m.seq");
    expect(vec.map((r) => r.project)).toEqual([project, project, "elsewhere", project, null]);
  }
});
