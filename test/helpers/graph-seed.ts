import { addLink } from "../../src/core/graph";
import { insertMemoryRows, type NewMemory } from "../../src/core/memories";
import { normalizeMemoryType } from "../../src/core/memories";
import type { Services } from "../../src/core/services";
import { withStorage } from "../../src/core/storage";

export interface SeedMemory {
  key: string;
  content?: string;
  type?: string;
  project?: string | null;
  /** Domain tags after the project, strongest first (as the distiller names them). */
  tags?: string[];
  strength?: number;
  /** Days since the decay clock was last refreshed (0 = now). */
  ageDays?: number;
}

/** [from key, to key, relationship, weight] */
export type SeedLink = [string, string, string, number];

const DAY = 86_400_000;

/**
 * Memories with exactly the links given: each gets its own basis vector, so
 * similarity linking (cosine 0 between any two) adds none of its own.
 */
export async function seedGraph(s: Services, memories: SeedMemory[], links: SeedLink[] = []): Promise<Record<string, string>> {
  const now = s.now();
  const offset = s.store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
  const vectors = memories.map((_, i) => {
    const v = new Float32Array(384);
    v[(offset + i) % 384] = 1;
    return v;
  });
  const items: NewMemory[] = memories.map((m) => ({
    content: m.content ?? `memory ${m.key}`,
    memoryType: normalizeMemoryType(m.type ?? "knowledge"),
    project: m.project === undefined ? "proj" : m.project,
    sourceAgent: "seed",
    createdAt: now - (m.ageDays ?? 0) * DAY,
    tags: m.tags,
  }));
  const ids: Record<string, string> = {};
  const rows = await s.storage.transaction(async (tx) => {
    const rows = await insertMemoryRows(withStorage(s, tx), items, vectors);
    const set = s.store.sqlite.prepare("UPDATE memories SET strength = ?, refreshed_at = ? WHERE id = ?");
    rows.forEach((r, i) => {
      const m = memories[i];
      ids[m.key] = r.id;
      set.run(m.strength ?? 1, now - (m.ageDays ?? 0) * DAY, r.id);
    });
    for (const [a, b, rel, w] of links) addLink(s, ids[a] ?? a, ids[b] ?? b, rel, w);
    return rows;
  });
  rows.forEach((r, i) => s.index.upsert(r.seq, vectors[i], items[i].project));
  return ids;
}
