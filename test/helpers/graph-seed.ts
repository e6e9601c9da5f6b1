import { addLink } from "../../src/core/graph";
import { normalizeMemoryType, type NewMemoryRow } from "../../src/core/memories";
import { liveIndex } from "../../src/core/memories/memories";
import { deriveTags } from "../../src/core/memories/tags";
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
  /** Its embedding (default: a basis vector no other seeded memory has). */
  vector?: Float32Array;
}

/** [from key, to key, relationship, weight] */
export type SeedLink = [string, string, string, number];

const DAY = 86_400_000;
/** The next basis vector: one per seeded memory in this test process. */
let basis = 0;

/**
 * Memories with exactly the links given, on either engine (through the
 * storage interface, in one transaction): each gets its own basis vector, so
 * no two are similar, and no similarity links are made.
 */
export async function seedGraph(s: Services, memories: SeedMemory[], links: SeedLink[] = []): Promise<Record<string, string>> {
  const now = s.now();
  const rows: NewMemoryRow[] = memories.map((m) => {
    let vector = m.vector;
    if (!vector) {
      vector = new Float32Array(384);
      vector[basis++ % 384] = 1;
    }
    const project = m.project === undefined ? "proj" : m.project;
    const at = now - (m.ageDays ?? 0) * DAY;
    return {
      id: crypto.randomUUID(),
      content: m.content ?? `memory ${m.key}`,
      memoryType: normalizeMemoryType(m.type ?? "knowledge"),
      project,
      sourceAgent: "seed",
      sourceAgentId: null,
      sourceDomain: null,
      sourceSession: null,
      privacy: "WORK",
      createdAt: at,
      updatedAt: now,
      refreshedAt: at,
      strength: m.strength ?? 1,
      vector,
      tags: deriveTags(project, m.tags),
    };
  });
  const ids: Record<string, string> = {};
  memories.forEach((m, i) => {
    ids[m.key] = rows[i].id;
  });
  const seqs = await s.storage.transaction(async (tx) => {
    const seqs = await tx.memories.insertMemories(rows);
    for (const [a, b, rel, w] of links) await addLink(withStorage(s, tx), ids[a] ?? a, ids[b] ?? b, rel, w);
    return seqs;
  });
  const index = liveIndex(s);
  if (index)
    seqs.forEach((seq, i) => {
      index.upsert(seq, rows[i].vector, rows[i].project);
    });
  return ids;
}
