import type { MemoryRow } from "../memories";
import { isoDate } from "../dates";
import { inlineMarkdown } from "../identity";
import { toView, type MemoryView } from "../memories";
import { parseLimit, parseProject } from "../search";
import type { Services } from "../services";
import { tagsOf } from "../memories";
import { counted } from "../text";
import { LEARNINGS_BLOCK_MAX, LEARNINGS_BLOCK_CHARS, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX, LEARNINGS_MAX_DAYS } from "./tuning";

export type { LearningsInput } from "./schema";
import type { LearningsInput } from "./schema";

/** A learnings-type memory with its domain tags and the memories it was drawn from. */
export interface LearningView extends MemoryView {
  tags: string[];
  /** Short ids of the memories it was derived from (links "derived_from"). */
  sources: string[];
}

/** The memory index that accompanies the Learnings block: what else there is to ask for. */
export interface MemoryIndex {
  memories: number;
  learnings: number;
  by_type: Record<string, number>;
  projects: { project: string | null; memories: number; learnings: number }[];
  domains: { domain: string; memories: number }[];
}

export interface LearningsResult {
  /** Markdown headed "## Learnings", ready to inject at session start; null when there are none. */
  block: string | null;
  learnings: LearningView[];
  index: MemoryIndex;
  days: number;
  project: string | null;
}

const DAY_MS = 86_400_000;
const INDEX_TOP = 20;

/**
 * memsvc_learnings / memsvc_lessons: learnings of the last `days` days
 * (created or updated), strongest first. With a project, that project's
 * learnings plus the project-less (global) ones, which apply everywhere.
 */
export async function listLearnings(s: Services, input: LearningsInput = {}): Promise<LearningView[]> {
  const days = parseLimit(input.days, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, "days");
  const project = parseProject(input.project);
  return selectLearnings(s, days, project);
}

async function selectLearnings(s: Services, days: number, project: string | null): Promise<LearningView[]> {
  const now = s.now();
  const rows = await s.storage.nightly.recentLearnings({ now, since: now - days * DAY_MS, project, limit: LEARNINGS_MAX });
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const tags = await tagsOf(s, ids);
  const sources = new Map<string, string[]>();
  for (const l of await s.storage.nightly.derivedFrom(ids)) {
    const list = sources.get(l.fromId) ?? [];
    list.push(l.toId.slice(0, 8));
    sources.set(l.fromId, list);
  }
  return rows.map((r: MemoryRow) => ({ ...toView(r, now), tags: (tags.get(r.id) ?? []).map((t) => t.tag), sources: sources.get(r.id) ?? [] }));
}

/** GET /learnings and GET /lessons. */
export async function learnings(s: Services, input: LearningsInput = {}): Promise<LearningsResult> {
  const days = parseLimit(input.days, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, "days");
  const project = parseProject(input.project);
  const list = await selectLearnings(s, days, project);
  const index = await memoryIndex(s);
  return { block: renderLearnings(list, { days, project, index }), learnings: list, index, days, project };
}

/** Counts by type, project and domain: cheap GROUP BYs over indexed columns. */
export async function memoryIndex(s: Services): Promise<MemoryIndex> {
  const counts = await s.storage.nightly.indexCounts(INDEX_TOP);
  const byType: Record<string, number> = {};
  let total = 0;
  for (const r of counts.byType) {
    byType[r.memoryType] = r.n;
    total += r.n;
  }
  return { memories: total, learnings: byType.learnings ?? 0, by_type: byType, projects: counts.projects, domains: counts.domains };
}

/** The session-start block: the strongest learnings, then one line on what else memory holds. */
export function renderLearnings(list: readonly LearningView[], ctx: { days: number; project: string | null; index: MemoryIndex }): string | null {
  if (list.length === 0) return null;
  const shown = list.slice(0, LEARNINGS_BLOCK_MAX);
  const scope = ctx.project ? ` (project ${ctx.project} and global)` : "";
  const lines = shown.map(
    (l) =>
      `- \`${l.short_id}\` ${isoDate(Date.parse(l.created_at))}${l.project && l.project !== ctx.project ? ` [${l.project}]` : ""}: ${inlineMarkdown(l.content, LEARNINGS_BLOCK_CHARS, true)}`,
  );
  const more = list.length > shown.length ? [`- …and ${list.length - shown.length} more (\`memsvc_learnings\`).`] : [];
  const projects = ctx.index.projects
    .filter((p) => p.project !== null)
    .slice(0, 8)
    .map((p) => `${p.project} (${p.memories})`);
  return [
    "## Learnings",
    `_Actionable lessons from successes and failures of the last ${ctx.days} day${ctx.days === 1 ? "" : "s"}${scope}. Load one with \`memsvc_get\` for its sources; cite it as (memory <short id>, <date>, from <source_agent>)._`,
    "",
    ...lines,
    ...more,
    "",
    `Memory holds ${counted(ctx.index.memories, "memory", "memories")} (${counted(ctx.index.learnings, "learning")})${projects.length ? ` in ${projects.join(", ")}` : ""}; \`memsvc_search\` finds them, \`memsvc_index\` lists the domains.`,
  ].join("\n");
}
