import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { FORMAT } from "../../memories/portability";
import { MEMORY_TYPES, type MemoryType } from "../../memories";
import type { ImportItem, ReaderOptions, ReadResult } from "../types";
import { checkPath } from "./files";

/**
 * memsvc's own JSONL export, merged into a home that may hold memories:
 * memories (content, type, project, dates, strength, source) and their
 * links. Ids are new; versions, anchors and counters stay behind (an exact
 * copy into an empty home is plain `memsvc import <file>`).
 */
export async function readMemsvcJsonl(path: string, opts: ReaderOptions): Promise<ReadResult> {
  const file = resolve(path);
  const fail = (message: string): ReadResult => ({ items: [], problems: [{ source: file, message }], sources: 0 });
  const bad = checkPath(file, "file");
  if (bad) return fail(bad);
  const byId = new Map<string, ImportItem>();
  const links: { from: string; to: string; relationship: string; weight: number }[] = [];
  let meta = false;
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity })) {
    n++;
    if (!line.trim()) continue;
    let r: Record<string, any>;
    try {
      r = JSON.parse(line);
    } catch {
      return fail(`line ${n} is not JSON`);
    }
    if (r.kind === "meta") meta = r.format === FORMAT;
    else if (r.kind === "memory") {
      if (typeof r.id !== "string" || typeof r.content !== "string" || !r.content.trim() || typeof r.created_at !== "number")
        return fail(`line ${n}: a memory without id, content or created_at`);
      const type = String(r.memory_type).toLowerCase();
      byId.set(r.id, {
        content: r.content,
        memoryType: (MEMORY_TYPES as readonly string[]).includes(type) ? (type as MemoryType) : "knowledge",
        project: typeof r.project === "string" ? r.project : null,
        createdAt: r.created_at,
        updatedAt: typeof r.updated_at === "number" ? r.updated_at : undefined,
        strength: typeof r.strength === "number" ? r.strength : undefined,
        sourceAgent: typeof r.source_agent === "string" ? r.source_agent : "memsvc",
        provenance: typeof r.source_session === "string" && r.source_session ? r.source_session : `${file}:${n}`,
        tags: Array.isArray(r.tags) ? r.tags.map((t: { tag?: unknown }) => t?.tag).filter((t: unknown): t is string => typeof t === "string") : [],
        keys: [`id:${r.id}`],
        links: [],
      });
    } else if (r.kind === "link") {
      if (typeof r.from_id === "string" && typeof r.to_id === "string")
        links.push({ from: r.from_id, to: r.to_id, relationship: String(r.relationship ?? "related"), weight: Number(r.weight) || 0.5 });
    }
  }
  if (!meta) return fail(`not a ${FORMAT} export (missing or different meta line)`);
  for (const l of links) byId.get(l.from)?.links.push({ to: `id:${l.to}`, relationship: l.relationship, weight: l.weight });
  void opts;
  return { items: [...byId.values()], problems: [], sources: 1 };
}
