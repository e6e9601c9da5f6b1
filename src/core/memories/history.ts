import { invalid, notFound } from "../../errors";
import { isoTime } from "../dates";
import { resolveMemory, updateMemory, type UpdateResult } from "./memories";
import type { Services } from "../services";
import { MEMORY_HISTORY_MAX } from "../tuning";

/**
 * Earlier versions of a memory. Whatever replaces a memory's content (PATCH
 * and memsvc_update, a restore, a distill that restates or corrects it, a
 * nightly merge) calls recordVersion inside the same transaction as the
 * change, so a version is never lost or recorded for a change that did not
 * commit. Versions go with their memory on delete (foreign key cascade):
 * deleting is forgetting.
 */

export type HistoryReason = "update" | "restore" | "distill" | "nightly-merge";

export interface VersionView {
  version: number;
  content: string;
  memory_type: string;
  project: string | null;
  reason: HistoryReason;
  /** nightly-merge: the memory that was folded into this one. */
  source_id?: string;
  /** When this text stopped being the memory's content. */
  replaced_at: string;
}

export interface HistoryView {
  id: string;
  short_id: string;
  current: { content: string; memory_type: string; project: string | null; updated_at: string };
  /** Newest first; at most MEMORY_HISTORY_MAX. */
  versions: VersionView[];
}

interface Snapshot {
  content: string;
  memoryType: string;
  project: string | null;
}

/** Keeps `prior` as the memory's next version; call inside the transaction that replaces it. */
export function recordVersion(s: Services, memoryId: string, prior: Snapshot, reason: HistoryReason, sourceId: string | null = null, at = s.now()): number {
  const db = s.store.sqlite;
  const { v } = db.query<{ v: number }, [string]>("SELECT coalesce(max(version), 0) + 1 AS v FROM memory_history WHERE memory_id = ?").get(memoryId)!;
  db.run("INSERT INTO memory_history(memory_id, version, content, memory_type, project, reason, source_id, replaced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
    memoryId,
    v,
    prior.content,
    prior.memoryType,
    prior.project,
    reason,
    sourceId,
    at,
  ]);
  db.run("DELETE FROM memory_history WHERE memory_id = ? AND version <= ?", [memoryId, v - MEMORY_HISTORY_MAX]);
  return v;
}

/** The current content of `memoryId` as a snapshot (inside a transaction: what is about to be replaced). */
export function currentSnapshot(s: Services, memoryId: string): Snapshot | null {
  const r = s.store.sqlite.query<{ content: string; memory_type: string; project: string | null }, [string]>("SELECT content, memory_type, project FROM memories WHERE id = ?").get(memoryId);
  return r ? { content: r.content, memoryType: r.memory_type, project: r.project } : null;
}

/**
 * A nightly merge folds `dropId` into `keepId`: the dropped memory's own
 * history moves over (renumbered after the survivor's), then its text is
 * recorded as a version of the survivor. Inside the merge's transaction.
 */
export function absorbHistory(s: Services, keepId: string, dropId: string): void {
  const db = s.store.sqlite;
  const dropped = currentSnapshot(s, dropId);
  if (!dropped) return;
  const rows = db
    .query<{ version: number; content: string; memory_type: string; project: string | null; reason: HistoryReason; source_id: string | null; replaced_at: number }, [string]>(
      "SELECT version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history WHERE memory_id = ? ORDER BY version",
    )
    .all(dropId);
  for (const r of rows) recordVersion(s, keepId, { content: r.content, memoryType: r.memory_type, project: r.project }, r.reason, r.source_id ?? dropId, r.replaced_at);
  db.run("DELETE FROM memory_history WHERE memory_id = ?", [dropId]);
  recordVersion(s, keepId, dropped, "nightly-merge", dropId);
}

function parseVersion(value: unknown): number {
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1) throw invalid("version must be a whole number of at least 1 (see GET /memory/history)");
  return n;
}

/** GET /memory/history, memsvc_history, `memsvc history`: the memory's current text and its earlier versions. */
export function memoryHistory(s: Services, rawId: unknown): HistoryView {
  const row = resolveMemory(s, rawId);
  const versions = s.store.sqlite
    .query<{ version: number; content: string; memory_type: string; project: string | null; reason: HistoryReason; source_id: string | null; replaced_at: number }, [string]>(
      "SELECT version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history WHERE memory_id = ? ORDER BY version DESC",
    )
    .all(row.id)
    .map((v) => {
      const view: VersionView = { version: v.version, content: v.content, memory_type: v.memory_type, project: v.project, reason: v.reason, replaced_at: isoTime(v.replaced_at) };
      if (v.source_id) view.source_id = v.source_id;
      return view;
    });
  return {
    id: row.id,
    short_id: row.id.slice(0, 8),
    current: { content: row.content, memory_type: row.memoryType, project: row.project, updated_at: isoTime(row.updatedAt) },
    versions,
  };
}

/**
 * POST /memory/restore and `memsvc history --restore`: makes an earlier
 * version current again (content, type and project; re-embedded). The text it
 * replaces becomes a new version, so a restore can itself be undone.
 */
export async function restoreVersion(s: Services, input: { id?: unknown; version?: unknown }): Promise<UpdateResult & { restored_version: number }> {
  const row = resolveMemory(s, input.id);
  if (input.version === undefined || input.version === null) throw invalid("version is required (see GET /memory/history)");
  const version = parseVersion(input.version);
  const v = s.store.sqlite
    .query<{ content: string; memory_type: string; project: string | null }, [string, number]>("SELECT content, memory_type, project FROM memory_history WHERE memory_id = ? AND version = ?")
    .get(row.id, version);
  if (!v) throw notFound(`memory ${row.id.slice(0, 8)} has no version ${version} (see GET /memory/history?id=${row.id.slice(0, 8)})`);
  const result = await updateMemory(s, { id: row.id, content: v.content, project: v.project, memory_type: v.memory_type }, "restore");
  return { ...result, restored_version: version };
}
