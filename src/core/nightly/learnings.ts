import type { MemoryRow } from "../../store/sqlite";
import { isoDate } from "../dates";
import { inlineMarkdown } from "../identity";
import { toView, type MemoryView } from "../memories";
import { fromSql } from "../search";
import { parseLimit, parseProject } from "../search";
import type { Services } from "../services";
import { effectiveStrengthSql } from "../memories";
import { tagsOf } from "../memories";
import { counted } from "../text";
import { LEARNINGS_BLOCK_MAX, LEARNINGS_BLOCK_CHARS, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX, LEARNINGS_MAX_DAYS } from "../tuning";

export interface LearningsInput {
  days?: unknown;
  project?: unknown;
}

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
export function listLearnings(s: Services, input: LearningsInput = {}): Promise<LearningView[]> {
  const days = parseLimit(input.days, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, "days");
  const project = parseProject(input.project);
  return selectLearnings(s, days, project);
}

async function selectLearnings(s: Services, days: number, project: string | null): Promise<LearningView[]> {
  const now = s.now();
  const rows = s.store.sqlite
    .query<Record<string, any>, { now: number; since: number; project: string | null; limit: number }>(
      `SELECT * FROM memories
        WHERE memory_type = 'learnings' AND (created_at >= :since OR updated_at >= :since)
          AND (:project IS NULL OR project = :project OR project IS NULL)
        ORDER BY ${effectiveStrengthSql()} DESC, created_at DESC LIMIT :limit`,
    )
    .all({ now, since: now - days * DAY_MS, project, limit: LEARNINGS_MAX })
    .map(fromSql);
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const tags = await tagsOf(s, ids);
  const sources = new Map<string, string[]>();
  for (const l of s.store.sqlite
    .query<{ from_id: string; to_id: string }, [string]>(
      "SELECT from_id, to_id FROM links WHERE relationship = 'derived_from' AND from_id IN (SELECT value FROM json_each(?)) ORDER BY to_id",
    )
    .all(JSON.stringify(ids))) {
    const list = sources.get(l.from_id) ?? [];
    list.push(l.to_id.slice(0, 8));
    sources.set(l.from_id, list);
  }
  return rows.map((r: MemoryRow) => ({ ...toView(r, now), tags: (tags.get(r.id) ?? []).map((t) => t.tag), sources: sources.get(r.id) ?? [] }));
}

/** GET /learnings and GET /lessons. */
export async function learnings(s: Services, input: LearningsInput = {}): Promise<LearningsResult> {
  const days = parseLimit(input.days, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, "days");
  const project = parseProject(input.project);
  const list = await selectLearnings(s, days, project);
  const index = memoryIndex(s);
  return { block: renderLearnings(list, { days, project, index }), learnings: list, index, days, project };
}

/** Counts by type, project and domain: cheap GROUP BYs over indexed columns. */
export function memoryIndex(s: Services): MemoryIndex {
  const byType: Record<string, number> = {};
  let total = 0;
  for (const r of s.store.sqlite.query<{ t: string; n: number }, []>("SELECT memory_type AS t, count(*) AS n FROM memories GROUP BY memory_type").all()) {
    byType[r.t] = r.n;
    total += r.n;
  }
  const projects = s.store.sqlite
    .query<{ project: string | null; memories: number; learnings: number }, [number]>(
      `SELECT project, count(*) AS memories, sum(memory_type = 'learnings') AS learnings
         FROM memories GROUP BY project ORDER BY memories DESC LIMIT ?`,
    )
    .all(INDEX_TOP);
  const domains = s.store.sqlite
    .query<{ domain: string; memories: number }, [number]>("SELECT tag AS domain, count(*) AS memories FROM memory_tags GROUP BY tag ORDER BY memories DESC, tag LIMIT ?")
    .all(INDEX_TOP);
  return { memories: total, learnings: byType.learnings ?? 0, by_type: byType, projects, domains };
}

/** The session-start block: the strongest learnings, then one line on what else memory holds. */
export function renderLearnings(list: readonly LearningView[], ctx: { days: number; project: string | null; index: MemoryIndex }): string | null {
  if (list.length === 0) return null;
  const shown = list.slice(0, LEARNINGS_BLOCK_MAX);
  const scope = ctx.project ? ` (project ${ctx.project} and global)` : "";
  const lines = shown.map((l) => `- \`${l.short_id}\` ${isoDate(Date.parse(l.created_at))}${l.project && l.project !== ctx.project ? ` [${l.project}]` : ""}: ${inlineMarkdown(l.content, LEARNINGS_BLOCK_CHARS, true)}`);
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
