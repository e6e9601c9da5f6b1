import type { Services } from "../services";
import { FEEDBACK_REFRESH_MS } from "./tuning";
import type { FeedbackEventRow } from "./feedback-store";

/**
 * What feedback currently says about a memory, as recall and search read
 * it on every query. Feedback is rare (people and agents reporting), so
 * every live mark is held in memory: the hot path reads a Map, never the
 * database. This server's own feedback and edits reload it at once; marks
 * another server wrote (PostgreSQL) show within FEEDBACK_REFRESH_MS.
 */
export interface MemoryMarks {
  /** `wrong` feedback not yet settled by a rewrite, a restore or a review: kept out of recall. */
  wrong: { at: number; note: string | null } | null;
  /** `outdated` feedback not yet settled: a stale mark with the note. */
  outdated: { at: number; note: string | null } | null;
  /** Retired from the pages: kept, with its history, but out of recall and search until restored. */
  retired: { at: number } | null;
  /** `irrelevant` feedback: the prompts (their vectors) it is demoted for. */
  irrelevant: { at: number; vector: Float32Array }[];
}

/** Services.state.feedbackMarks: the marks, when they were read, and the read under way. */
export interface FeedbackMarksCache {
  loadedAt: number;
  marks: Map<string, MemoryMarks>;
  loading: Promise<void> | null;
}
type Cache = FeedbackMarksCache;

function detailOf(e: FeedbackEventRow): Record<string, unknown> {
  if (!e.detail) return {};
  try {
    const d = JSON.parse(e.detail) as unknown;
    return d && typeof d === "object" && !Array.isArray(d) ? (d as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function decodeVector(b64: unknown): Float32Array | null {
  if (typeof b64 !== "string") return null;
  const bytes = Buffer.from(b64, "base64");
  if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0) return null;
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

export const encodeVector = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");

/** Folds the events (oldest first) into marks: the latest of each kind decides; a review settles `wrong`, an unretire a retire. */
export function foldMarks(events: readonly FeedbackEventRow[]): Map<string, MemoryMarks> {
  const out = new Map<string, MemoryMarks>();
  const sorted = [...events].sort((a, b) => a.at - b.at);
  for (const e of sorted) {
    let m = out.get(e.memoryId);
    if (!m) out.set(e.memoryId, (m = { wrong: null, outdated: null, retired: null, irrelevant: [] }));
    const d = detailOf(e);
    const note = typeof d.note === "string" ? d.note : null;
    switch (e.kind) {
      case "wrong":
        m.wrong = { at: e.at, note };
        break;
      case "reviewed":
        m.wrong = null;
        m.outdated = null;
        break;
      case "outdated":
        m.outdated = { at: e.at, note };
        break;
      case "retired":
        m.retired = { at: e.at };
        break;
      case "unretired":
        m.retired = null;
        break;
      case "irrelevant": {
        const vector = decodeVector(d.vector);
        if (vector) m.irrelevant.push({ at: e.at, vector });
        break;
      }
    }
  }
  for (const [id, m] of out) if (!m.wrong && !m.outdated && !m.retired && m.irrelevant.length === 0) out.delete(id);
  return out;
}

/** Marked wrong or outdated by feedback, not yet settled (reviewed, rewritten, restored) and not retired: what the browser's review filter finds. */
export const needsReview = (m: MemoryMarks | undefined): boolean => !!m && !!(m.wrong || m.outdated) && !m.retired;

/**
 * The marks read afresh from the database, not the cache: the memory
 * browser's review filter and bulk delete must be exact, even for marks
 * another server wrote a moment ago (feedback is rare: the read is small).
 */
export async function currentMarks(s: Services): Promise<Map<string, MemoryMarks>> {
  return foldMarks(await s.storage.feedback.liveEvents());
}

async function load(s: Services, c: Cache): Promise<void> {
  const started = s.now();
  try {
    c.marks = foldMarks(await s.storage.feedback.liveEvents());
    c.loadedAt = started;
  } catch (e) {
    // Keep serving the marks we have; the next query tries again.
    s.log("warn", `feedback marks: not reloaded: ${(e as Error).message}`);
  } finally {
    c.loading = null;
  }
}

/**
 * The live marks, by memory id. The first call loads them; later calls
 * answer from memory and reload in the background when older than
 * FEEDBACK_REFRESH_MS (a query never waits for that).
 */
export async function feedbackMarks(s: Services): Promise<Map<string, MemoryMarks>> {
  const root = s.state.root;
  let c = root.state.feedbackMarks;
  if (!c) {
    root.state.feedbackMarks = c = { loadedAt: -Infinity, marks: new Map(), loading: null };
    c.loading = load(root, c);
  }
  if (c.loadedAt === -Infinity) {
    await c.loading;
    return c.marks;
  }
  if (!c.loading && root.now() - c.loadedAt > FEEDBACK_REFRESH_MS) c.loading = load(root, c);
  return c.marks;
}

/** After this server's feedback or a change of a memory's content: the next query reads the marks afresh. */
export async function reloadMarks(s: Services): Promise<void> {
  const root = s.state.root;
  const c = root.state.feedbackMarks;
  if (!c) return;
  if (c.loading) await c.loading;
  c.loading = load(root, c);
  await c.loading;
}
