import { anchorsOf } from "./anchors";
import { isoTime } from "../dates";
import { feedbackMarks } from "./feedback-marks";
import { citation, resolveInScope, toView, type MemoryView } from "./memories";
import type { ProjectScope } from "../scope";
import type { Services } from "../services";
import { round3 } from "./strength";
import { DEFAULT_DOMAIN, tagsOf } from "./tags";

/** Longest link preview in the detail view. */
const LINK_PREVIEW_CHARS = 160;
/** Links shown per memory; linking keeps a handful per memory, hubs can hold hundreds. */
const MAX_DETAIL_LINKS = 100;

export interface LinkedMemory {
  id: string;
  short_id: string;
  preview: string;
  memory_type: string;
  relationship: string;
  weight: number;
  /** "out": this memory links to it; "in": it links to this memory. */
  direction: "out" | "in";
}

export interface MemoryDetail {
  memory: MemoryView;
  citation: string;
  domain: string;
  tags: { tag: string; weight: number }[];
  links: LinkedMemory[];
  /** Feedback in force: `wrong` (out of recall, to review), `outdated` (a reported stale mark), retired, and how many prompts it is irrelevant to. */
  feedback: {
    wrong: { at: string; note: string | null } | null;
    outdated: { at: string; note: string | null } | null;
    retired: { at: string } | null;
    irrelevant: number;
  };
}

/**
 * GET /memories/detail: everything the browser's detail view shows. Unlike
 * GET /memory (an agent fetching a memory to use it), a person looking at it
 * does not count as a use: nothing is written, strength is unchanged.
 * Within a scope, only links to the scope's memories are listed.
 */
export async function memoryDetail(s: Services, rawId: unknown, scope: ProjectScope = null): Promise<MemoryDetail> {
  const row = await resolveInScope(s, rawId, scope);
  const tags = ((await tagsOf(s, [row.id])).get(row.id) ?? []).map((t) => ({ tag: t.tag, weight: round3(t.weight) }));
  const links = (await s.storage.memories.linksOf(row.id, LINK_PREVIEW_CHARS, MAX_DETAIL_LINKS, scope)).map((l) => ({
    id: l.id,
    short_id: l.id.slice(0, 8),
    preview: l.length > LINK_PREVIEW_CHARS ? `${l.head.replace(/\s+/g, " ").trim()}…` : l.head.replace(/\s+/g, " ").trim(),
    memory_type: l.memoryType,
    relationship: l.relationship,
    weight: round3(l.weight),
    direction: l.direction,
  }));
  const memory = toView(row, s.now());
  const anchors = (await anchorsOf(s, [row.id])).get(row.id);
  if (anchors) memory.anchors = anchors;
  const marks = (await feedbackMarks(s)).get(row.id);
  const at = (m: { at: number; note?: string | null } | null | undefined) =>
    m ? { at: isoTime(m.at), ...("note" in m ? { note: m.note ?? null } : {}) } : null;
  const feedback = {
    wrong: at(marks?.wrong) as MemoryDetail["feedback"]["wrong"],
    outdated: at(marks?.outdated) as MemoryDetail["feedback"]["outdated"],
    retired: at(marks?.retired),
    irrelevant: marks?.irrelevant.length ?? 0,
  };
  return { memory, citation: citation(row), domain: tags[0]?.tag ?? DEFAULT_DOMAIN, tags, links, feedback };
}
