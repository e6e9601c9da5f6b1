import { invalid } from "../../errors";
import { parseSessionDate } from "../dates";
import { insertAndLink, linkToNearest } from "../graph";
import {
  countSession,
  deriveTags,
  liveIndex,
  normalizeMemoryType,
  optionalString,
  parseAnchors,
  requireContent,
  writeAnchors,
  type NewMemory,
  type NewMemoryRow,
} from "../memories";
import { commitGrouped } from "../memories/group-commit";
import type { IngestInput } from "../memories/schema";
import { INITIAL_STRENGTH } from "../memories/tuning";
import { redact } from "../secrets";
import type { Services } from "../services";
import { withStorage } from "../storage";

// Writing new memories: above memories (the rows) and graph (the links each
// new memory gets to its nearest neighbours) in the capability order.

export type IngestResult = { id: string; message: string } | { id: null; skipped: true; existing_count: number };

/**
 * Inserts memories with their vectors, domain tags and similarity links. Call
 * it with `withStorage(s, tx)` inside the caller's transaction so the links
 * land with the rows. The FTS row follows by trigger; the in-memory index is
 * updated by the caller once the transaction has committed.
 */
export async function insertMemoryRows(s: Services, items: NewMemory[], vectors: Float32Array[]): Promise<{ id: string; seq: number }[]> {
  const now = s.now();
  const rows = items.map((m, i) => rowOf(m, vectors[i], now));
  if (rows.length === 1) {
    // One memory (POST /ingest): its rows and links in one round trip where the engine can (PostgreSQL).
    const one = await insertAndLink(s, rows[0]);
    if (one !== null) return [one];
  }
  const seqs = await s.storage.memories.insertMemories(rows);
  const out: { id: string; seq: number }[] = [];
  for (let i = 0; i < rows.length; i++) {
    // The index does not hold this batch yet: links go to existing memories only.
    await linkToNearest(s, rows[i].id, vectors[i], items[i].project, { batch: rows.map((r) => r.id) });
    out.push({ id: rows[i].id, seq: seqs[i] });
  }
  return out;
}

/** The row a new memory is stored as (a fresh id; strength, times and tags as every write path sets them). */
function rowOf(m: NewMemory, vector: Float32Array, now: number): NewMemoryRow {
  return {
    id: crypto.randomUUID(),
    content: m.content,
    memoryType: m.memoryType,
    project: m.project,
    sourceAgent: m.sourceAgent,
    sourceAgentId: m.sourceAgentId ?? null,
    sourceDomain: m.sourceDomain ?? null,
    sourceSession: m.sourceSession ?? null,
    privacy: m.privacy ?? "WORK",
    createdAt: m.createdAt,
    updatedAt: now,
    refreshedAt: Math.max(m.createdAt, now),
    strength: INITIAL_STRENGTH,
    vector,
    tags: deriveTags(m.project, m.tags),
    createdBy: m.createdBy ?? null,
  };
}

/** POST /ingest and memsvc_ingest: one pre-distilled memory, deduplicated on source_session. */
export async function ingestMemory(s: Services, input: IngestInput, opts: { createdBy?: string | null } = {}): Promise<IngestResult> {
  const content = await redact(requireContent(input.content));
  const memoryType = input.memory_type === undefined || input.memory_type === null ? "experience" : normalizeMemoryType(input.memory_type);
  const project = optionalString(input.project, "project");
  const sourceAgent = optionalString(input.source_agent, "source_agent") ?? "unknown";
  const session = optionalString(input.source_session, "source_session", 500);
  const privacy = optionalString(input.privacy, "privacy", 20)?.toUpperCase() ?? "WORK";
  if (!["PUBLIC", "WORK", "PERSONAL", "SENSITIVE"].includes(privacy)) throw invalid("privacy must be PUBLIC, WORK, PERSONAL or SENSITIVE");
  const createdAt = input.session_date === undefined || input.session_date === null ? s.now() : parseSessionDate(input.session_date);
  const anchors = parseAnchors(input.anchors);
  const existing = session ? await countSession(s, session) : 0;
  if (existing > 0) return { id: null, skipped: true, existing_count: existing };
  return s.track(
    (async () => {
      const [vector] = await s.embedder.embed([content], "document");
      const item: NewMemory = { content, memoryType, project, sourceAgent, sourceSession: session, privacy, createdAt, createdBy: opts.createdBy ?? null };
      if (!session && !anchors) {
        // Nothing else to write with it (no session to claim, no anchors): where the engine
        // writes a memory and its links atomically in one message (PostgreSQL), that is the
        // whole ingest, one round trip without a transaction of ours around it. The index is
        // told once it has committed, as the grouped path's `apply` does (PostgreSQL: the count).
        const one = await insertAndLink(s, rowOf(item, vector, s.now()));
        if (one !== null) {
          liveIndex(s)?.upsert(one.seq, vector, project);
          return { id: one.id, message: `Stored memory ${one.id.slice(0, 8)} (${memoryType}).` } satisfies IngestResult;
        }
      }
      // Checked again inside the transaction: a concurrent ingest of the same
      // session may have committed while we were embedding. Concurrent ingests
      // share one transaction where the engine allows (group-commit.ts); each
      // one's vector joins the live index before the next one links.
      const result = await commitGrouped(
        s,
        async (tx): Promise<{ skipped: number } | { row: { id: string; seq: number } }> => {
          const again = session ? await tx.memories.claimSession(session) : 0;
          if (again > 0) return { skipped: again };
          const ts = withStorage(s, tx);
          const [row] = await insertMemoryRows(ts, [item], [vector]);
          if (anchors) await writeAnchors(ts, [row.id], anchors, s.now());
          return { row };
        },
        (out) => {
          const index = liveIndex(s);
          if (!index || "skipped" in out) return null;
          index.upsert(out.row.seq, vector, project);
          return () => index.remove(out.row.seq);
        },
      );
      if ("skipped" in result) return { id: null, skipped: true, existing_count: result.skipped } satisfies IngestResult;
      return { id: result.row.id, message: `Stored memory ${result.row.id.slice(0, 8)} (${memoryType}).` } satisfies IngestResult;
    })(),
  );
}
