import { getMeta, openStore, setMeta } from "../../src/store/sqlite";
import { FallbackEmbedder } from "../../src/embed";
import { hashEmbed } from "../../src/embed/fallback";
import { prng, type NoteGenerator } from "./corpus";

export interface SeedResult {
  inserted: number;
  total: number;
  seconds: number;
  /** Share of `seconds` spent computing the (hashed) vectors. */
  embed_seconds: number;
  links: number;
}

const BATCH = 5000;

/**
 * The id of the n-th memory a seed writes into a store: deterministic, so the
 * same sizes give the same ids on every run (bench/lib/pg-cache.ts compares a
 * cached PostgreSQL seed with the SQLite store by them), random-looking in
 * front like crypto.randomUUID() (inserts land all over the id index, as
 * real ids do), and unique through the index in the last group.
 */
export function seedId(n: number): string {
  const r = prng(0x9e3779b9 ^ n);
  const hex = (digits: number) =>
    Math.floor(r() * 2 ** 32)
      .toString(16)
      .padStart(8, "0")
      .slice(0, digits);
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${n.toString(16).padStart(12, "0")}`;
}

/**
 * Appends `count` generated memories straight into the SQLite file (memories
 * + FTS by trigger, vec0 vectors, domain tags, similarity-like links), in
 * batches of one transaction each, so the bulk of a large store is not timed
 * through HTTP or the model. Vectors are the offline embedder's, which the
 * server then uses for queries, so vector hits are meaningful.
 */
export function seedStore(dbFile: string, gen: NoteGenerator, count: number, now = Date.now()): SeedResult {
  const store = openStore(dbFile);
  const db = store.sqlite;
  if (getMeta(store, "embedder_id") === null) setMeta(store, "embedder_id", new FallbackEmbedder().id);
  const insertMemory = db.prepare(
    `INSERT INTO memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength, shown_count, used_count)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertVec = db.prepare("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
  const insertTag = db.prepare("INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)");
  const insertLink = db.prepare("INSERT OR IGNORE INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, 'related', ?, ?)");
  // Ids continue from what the store holds (bench/http.ts seeds each size on top of the last).
  let nextId = db.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
  // Recent ids per project: new notes link to a few of them, as linkToNearest would within a topic.
  const recentIds = new Map<string, string[]>();
  let embedMs = 0;
  let links = 0;
  const started = performance.now();
  for (let done = 0; done < count; ) {
    const n = Math.min(BATCH, count - done);
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        const note = gen.note();
        const t = performance.now();
        const vector = hashEmbed(note.content);
        embedMs += performance.now() - t;
        const id = seedId(nextId++);
        const createdAt = gen.createdAt(now);
        const used = gen.random() < 0.1 ? 1 + Math.floor(gen.random() * 5) : 0;
        const refreshedAt = used ? createdAt + Math.floor((now - createdAt) * gen.random()) : createdAt;
        const { lastInsertRowid } = insertMemory.run(
          id,
          note.content,
          note.memoryType,
          note.project,
          "bench-agent",
          createdAt,
          createdAt,
          refreshedAt,
          1 + used * 0.25,
          used * 3,
          used,
        );
        insertVec.run(BigInt(lastInsertRowid), vector);
        insertTag.run(id, note.project, 1);
        const ids = recentIds.get(note.project) ?? [];
        const k = gen.random() < 0.6 ? 1 + Math.floor(gen.random() * 3) : 0;
        for (let j = 0; j < k && ids.length > 0; j++) {
          insertLink.run(id, ids[Math.floor(gen.random() * ids.length)], 0.45 + 0.5 * gen.random(), createdAt);
          links++;
        }
        ids.push(id);
        if (ids.length > 200) ids.shift();
        recentIds.set(note.project, ids);
      }
    })();
    done += n;
  }
  const total = db.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
  store.close();
  return { inserted: count, total, seconds: (performance.now() - started) / 1000, embed_seconds: embedMs / 1000, links };
}
