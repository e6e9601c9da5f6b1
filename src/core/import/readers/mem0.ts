import { resolve } from "node:path";
import type { ImportItem, ReaderOptions, ReadResult } from "../types";
import { checkPath, readText } from "./files";
import { parseDate, typeFromWord } from "./note";

/**
 * A mem0 export: the JSON of `get_all` (mem0 OSS `Memory.get_all` and the
 * platform's `MemoryClient.get_all`, both `{"results": [...]}`; v1 answered a
 * bare list), each memory with `memory`, `id`, `hash`, `metadata`,
 * `categories`, `user_id`/`agent_id`/`app_id`/`run_id`, `created_at` and
 * `updated_at`. The project is `metadata.project`, else `app_id`; the type
 * `metadata.type` or the first category that names one. One bad entry
 * refuses the whole file.
 */
export async function readMem0(path: string, opts: ReaderOptions): Promise<ReadResult> {
  const file = resolve(path);
  const fail = (message: string): ReadResult => ({ items: [], problems: [{ source: file, message }], sources: 0 });
  const bad = checkPath(file, "file");
  if (bad) return fail(bad);
  let data: unknown;
  try {
    data = JSON.parse(await readText(file));
  } catch (e) {
    return fail(`not JSON (${(e as Error).message.split("\n")[0]})`);
  }
  const list = Array.isArray(data)
    ? data
    : data && typeof data === "object"
      ? ((data as Record<string, unknown>).results ?? (data as Record<string, unknown>).memories)
      : null;
  if (!Array.isArray(list)) return fail('not a mem0 export: expected a list of memories or {"results": [...]}');
  const items: ImportItem[] = [];
  for (const [i, m] of list.entries()) {
    if (!m || typeof m !== "object" || Array.isArray(m)) return fail(`entry ${i + 1} is not an object`);
    const r = m as Record<string, unknown>;
    if (typeof r.memory !== "string" || !r.memory.trim()) return fail(`entry ${i + 1} has no "memory" text`);
    const meta = r.metadata && typeof r.metadata === "object" && !Array.isArray(r.metadata) ? (r.metadata as Record<string, unknown>) : {};
    const categories = Array.isArray(r.categories) ? r.categories.filter((c): c is string => typeof c === "string") : [];
    const named = [meta.type, meta.category, ...categories].map((w) => typeFromWord(w, "knowledge")).find((t) => t !== "knowledge");
    const project = [meta.project, r.app_id].find((p): p is string => typeof p === "string" && p.trim() !== "");
    items.push({
      content: r.memory.trim(),
      memoryType: named ?? "knowledge",
      project: project?.trim() ?? null,
      createdAt: parseDate(r.created_at) ?? opts.now,
      sourceAgent: "mem0",
      provenance: `${file}#${i + 1}${typeof r.id === "string" ? ` (mem0 ${r.id})` : ""}`,
      tags: categories,
      keys: typeof r.id === "string" ? [`mem0:${r.id}`] : [],
      links: [],
    });
  }
  return { items, problems: [], sources: 1 };
}
