import { invalid, notFound } from "../../errors";
import { isoTime } from "../dates";
import { resolveMemory, updateMemory, type UpdateResult } from "./memories";
import type { RestoreInput } from "./schema";
import type { Services } from "../services";
import type { HistoryReason } from "./versions";

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

function parseVersion(value: unknown): number {
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1) throw invalid("version must be a whole number of at least 1 (see GET /memory/history)");
  return n;
}

/** GET /memory/history, memsvc_history, `memsvc history`: the memory's current text and its earlier versions. */
export async function memoryHistory(s: Services, id: string): Promise<HistoryView> {
  const row = await resolveMemory(s, id);
  const versions = (await s.storage.memories.versions(row.id)).reverse().map((v) => {
    const view: VersionView = {
      version: v.version,
      content: v.content,
      memory_type: v.memoryType,
      project: v.project,
      reason: v.reason as HistoryReason,
      replaced_at: isoTime(v.replacedAt),
    };
    if (v.sourceId) view.source_id = v.sourceId;
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
export async function restoreVersion(s: Services, input: RestoreInput): Promise<UpdateResult & { restored_version: number }> {
  const row = await resolveMemory(s, input.id);
  if (input.version === undefined || input.version === null) throw invalid("version is required (see GET /memory/history)");
  const version = parseVersion(input.version);
  const v = await s.storage.memories.version(row.id, version);
  if (!v) throw notFound(`memory ${row.id.slice(0, 8)} has no version ${version} (see GET /memory/history?id=${row.id.slice(0, 8)})`);
  const result = await updateMemory(s, { id: row.id, content: v.content, project: v.project, memory_type: v.memoryType }, "restore");
  return { ...result, restored_version: version };
}
