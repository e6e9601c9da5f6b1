import { invalid } from "../../errors";
import type { Storage } from "../storage";
import { MIGRATE_TABLES, type MigrateTable } from "./store-bulk";
import { MIGRATE_BATCH } from "./tuning";
import { counted } from "../text";

/**
 * `memsvc migrate`: copies one store into another (the laptop's SQLite file
 * into the team's PostgreSQL) table by table, in batches. Each batch is one
 * transaction on the target that also stores the cursor (where the copy
 * stands) in the target's meta, so an interrupted run continues after the
 * last committed batch, and a run after completion changes nothing.
 *
 * What is not copied, and why: recall-index state (which memories a session
 * was already shown: it lives hours, a lost one shows a memory once more),
 * nightly run records and embedder calibration (recomputed by the target's
 * servers), the distiller's dropped-fragment queue (emptied nightly) and
 * SQLite's vector change log (an engine-internal journal).
 */

export interface MigrateProgress {
  table: MigrateTable;
  /** Rows copied so far, all tables. */
  rows: number;
  /** Memories copied so far, and how many the source holds. */
  memories: number;
  totalMemories: number;
}

export interface MigrateResult {
  status: "done" | "already-done";
  /** Rows copied per table by this and earlier (interrupted) runs. */
  copied: Record<MigrateTable, number>;
  resumed: boolean;
}

/** What the target's meta holds between batches. */
interface Cursor {
  source: string;
  table: MigrateTable;
  after: number;
  copied: Record<MigrateTable, number>;
  complete: boolean;
}

const zero = (): Record<MigrateTable, number> => Object.fromEntries(MIGRATE_TABLES.map((t) => [t, 0])) as Record<MigrateTable, number>;

function parseCursor(text: string): Cursor {
  try {
    const c = JSON.parse(text);
    if (typeof c.source === "string" && MIGRATE_TABLES.includes(c.table) && Number.isFinite(c.after) && typeof c.complete === "boolean")
      return { ...c, copied: { ...zero(), ...c.copied } };
  } catch {
    /* reported below */
  }
  throw invalid("the target holds a migrate cursor this version cannot read; migrate into a fresh schema");
}

/**
 * Copies `source` into `target`. `sourceId` names the source for the cursor
 * (a re-run from another store into a half-filled target is refused).
 */
export async function migrateStore(
  source: Storage,
  target: Storage,
  opts: { sourceId: string; batch?: number; progress?: (p: MigrateProgress) => void; signal?: AbortSignal },
): Promise<MigrateResult> {
  const batch = opts.batch ?? MIGRATE_BATCH;
  const stored = await target.memories.migrateCursor();
  let cursor: Cursor;
  if (stored === null) {
    const existing = await target.memories.countMemories();
    if (existing > 0)
      throw invalid(
        `the target at ${target.location} already holds ${counted(existing, "memory", "memories")} and no migrate cursor; migrate into an empty database or schema`,
      );
    cursor = { source: opts.sourceId, table: MIGRATE_TABLES[0], after: 0, copied: zero(), complete: false };
  } else {
    cursor = parseCursor(stored);
    if (cursor.source !== opts.sourceId)
      throw invalid(`the target at ${target.location} holds a migration from ${cursor.source}, not from ${opts.sourceId}; use a fresh schema`);
    if (cursor.complete) return { status: "already-done", copied: cursor.copied, resumed: false };
  }
  const resumed = stored !== null;
  const { embedderId } = await source.memories.embedderState();
  const totalMemories = cursor.copied.memories + (await source.memories.countMemories(cursor.table === "memories" ? cursor.after : Number.MAX_SAFE_INTEGER));
  const report = () => {
    const rows = Object.values(cursor.copied).reduce((a, b) => a + b, 0);
    opts.progress?.({ table: cursor.table, rows, memories: cursor.copied.memories, totalMemories });
  };
  report();
  for (let i = MIGRATE_TABLES.indexOf(cursor.table); i < MIGRATE_TABLES.length; i++) {
    const table = MIGRATE_TABLES[i];
    if (table !== cursor.table) cursor = { ...cursor, table, after: 0 };
    for (;;) {
      if (opts.signal?.aborted) throw invalid("migrate interrupted; run it again to continue");
      const chunk = await source.memories.migrateRead(table, cursor.after, batch);
      if (chunk.last === null) break;
      const next: Cursor = { ...cursor, after: chunk.last, copied: { ...cursor.copied, [table]: cursor.copied[table] + chunk.rows.length } };
      await target.memories.migrateWrite(chunk.rows, JSON.stringify(next), { embedderId, finish: false });
      cursor = next;
      report();
    }
  }
  cursor = { ...cursor, complete: true };
  await target.memories.migrateWrite([], JSON.stringify(cursor), { embedderId, finish: true });
  return { status: "done", copied: cursor.copied, resumed };
}
