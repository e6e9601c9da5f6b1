import { SQL } from "bun";
import { FallbackEmbedder } from "../../src/embed";
import { hashEmbed } from "../../src/embed/fallback";
import type { NoteGenerator } from "./corpus";
import type { SeedResult } from "./seed";

const BATCH = 1000;

/**
 * seedStore's twin for a PostgreSQL store (its tables made by a server's
 * start-up migration): the same generated memories, vectors, domain tags and
 * links, written straight into the schema in batches (one transaction and a
 * few multi-row statements each), so the bulk is not timed through HTTP.
 */
export async function seedPostgres(url: string, schema: string, gen: NoteGenerator, count: number, now = Date.now()): Promise<SeedResult> {
  const sql = new SQL({ url, prepare: false, max: 1 });
  const S = schema;
  let embedMs = 0;
  let links = 0;
  const started = performance.now();
  const recentIds = new Map<string, string[]>();
  try {
    await sql.unsafe(`INSERT INTO ${S}.meta(key, value) VALUES ('embedder_id', $1) ON CONFLICT (key) DO NOTHING`, [new FallbackEmbedder().id]);
    for (let done = 0; done < count; ) {
      const n = Math.min(BATCH, count - done);
      const m = { id: [] as string[], content: [] as string[], type: [] as string[], project: [] as string[], created: [] as number[], refreshed: [] as number[], strength: [] as number[], shown: [] as number[], used: [] as number[] };
      const vectors: string[] = [];
      const l = { from: [] as string[], to: [] as string[], weight: [] as number[], at: [] as number[] };
      for (let i = 0; i < n; i++) {
        const note = gen.note();
        const t = performance.now();
        const vector = hashEmbed(note.content);
        embedMs += performance.now() - t;
        const id = crypto.randomUUID();
        const createdAt = gen.createdAt(now);
        const used = gen.random() < 0.1 ? 1 + Math.floor(gen.random() * 5) : 0;
        const refreshedAt = used ? createdAt + Math.floor((now - createdAt) * gen.random()) : createdAt;
        m.id.push(id);
        m.content.push(note.content);
        m.type.push(note.memoryType);
        m.project.push(note.project ?? "");
        m.created.push(createdAt);
        m.refreshed.push(refreshedAt);
        m.strength.push(1 + used * 0.25);
        m.shown.push(used * 3);
        m.used.push(used);
        vectors.push(`[${Array.from(vector).join(",")}]`);
        const ids = recentIds.get(note.project ?? "") ?? [];
        const k = gen.random() < 0.6 ? 1 + Math.floor(gen.random() * 3) : 0;
        for (let j = 0; j < k && ids.length > 0; j++) {
          l.from.push(id);
          l.to.push(ids[Math.floor(gen.random() * ids.length)]);
          l.weight.push(0.45 + 0.5 * gen.random());
          l.at.push(createdAt);
        }
        ids.push(id);
        if (ids.length > 200) ids.shift();
        recentIds.set(note.project ?? "", ids);
      }
      await sql.begin(async (tx) => {
        const rows = await tx.unsafe(
          `INSERT INTO ${S}.memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength, shown_count, used_count)
           SELECT id, content, t, nullif(p, ''), 'bench-agent', c, c, r, s, sh, u
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::float8[], $8::int[], $9::int[]) WITH ORDINALITY AS x(id, content, t, p, c, r, s, sh, u, ord)
            ORDER BY ord RETURNING seq::float8 AS seq, id`,
          [m.id, m.content, m.type, m.project, m.created, m.refreshed, m.strength, m.shown, m.used],
        );
        const seqOf = new Map((rows as { seq: number; id: string }[]).map((r) => [r.id, r.seq]));
        await tx.unsafe(`INSERT INTO ${S}.memory_vec(seq, embedding) SELECT s, v::vector FROM unnest($1::bigint[], $2::text[]) AS x(s, v)`, [m.id.map((id) => seqOf.get(id)), vectors]);
        await tx.unsafe(`INSERT INTO ${S}.memory_tags(memory_id, tag, weight) SELECT id, p, 1 FROM unnest($1::text[], $2::text[]) AS x(id, p) WHERE p <> ''`, [m.id, m.project]);
        if (l.from.length) {
          await tx.unsafe(
            `INSERT INTO ${S}.links(from_id, to_id, relationship, weight, created_at) SELECT f, t, 'related', w, a FROM unnest($1::text[], $2::text[], $3::float8[], $4::bigint[]) AS x(f, t, w, a)
             ON CONFLICT DO NOTHING`,
            [l.from, l.to, l.weight, l.at],
          );
          links += l.from.length;
        }
      });
      done += n;
    }
    const [{ total }] = await sql.unsafe(`SELECT count(*)::float8 AS total FROM ${S}.memories`);
    return { inserted: count, total: Number(total), seconds: (performance.now() - started) / 1000, embed_seconds: embedMs / 1000, links };
  } finally {
    await sql.close();
  }
}
