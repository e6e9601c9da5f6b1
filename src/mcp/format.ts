import { staleNote, type AnchorView } from "../core/memories";
import type { HistoryView } from "../core/memories";
import type { LearningView } from "../core/nightly";
import { citation, type MemoryView, type UpdateResult } from "../core/memories";
import type { RecentHit } from "../core/search";
import type { SearchResult } from "../core/search";
import type { AppError } from "../errors";

/**
 * Plain-text renderings of tool results. An agent reads these, so every
 * memory line carries the short id it can pass back to memsvc_get and the
 * citation it should use when the memory informs its answer.
 */

/** Longest content shown per memory in a list; memsvc_get returns the whole text. */
const LIST_CONTENT_CHARS = 1500;
/** Longest before/after text shown per field by memsvc_update. */
const CHANGE_CHARS = 2000;

const day = (iso: string) => iso.slice(0, 10);
const links = (n: number) => `${n} connection${n === 1 ? "" : "s"}`;

export function citeView(m: Pick<MemoryView, "id" | "created_at" | "source_agent">): string {
  return citation({ id: m.id, createdAt: Date.parse(m.created_at), sourceAgent: m.source_agent });
}

function clip(text: string, max: number, id: string): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}… (cut; memsvc_get ${id} returns all ${t.length} characters)` : t;
}

function indent(text: string): string {
  return text.replace(/\n/g, "\n   ");
}

function facts(m: MemoryView, extra: string[]): string {
  return [m.memory_type, m.project ? `project ${m.project}` : "no project", ...extra, day(m.created_at), `from ${m.source_agent}`].join(" · ");
}

export function searchText(r: SearchResult, project: string | null, minScore?: number | null): string {
  const scope = project ? ` in project ${project}` : "";
  const floor = typeof minScore === "number" ? ` scoring at least ${minScore}` : "";
  if (r.count === 0)
    return `No memories found for "${r.query}"${scope}${floor}. Try other words${floor ? ", a lower min_score" : ""}, drop the project filter, or use memsvc_recent.`;
  const lines = [`${r.count} memor${r.count === 1 ? "y" : "ies"} for "${r.query}"${scope}, best first:`, ""];
  r.results.forEach((m, i) => {
    lines.push(`${i + 1}. [${m.short_id}] ${facts(m, [`score ${m.score}`, `strength ${m.effective_strength}`, links(m.connections)])}`);
    lines.push(`   ${indent(clip(m.content, LIST_CONTENT_CHARS, m.short_id))}`);
    lines.push(`   Cite: ${citeView(m)}`);
    lines.push("");
  });
  lines.push("Cite a memory you rely on as (memory <short_id>, <date>, from <source_agent>). memsvc_get <short_id> loads one in full and marks it used.");
  return lines.join("\n");
}

export function recentText(r: { count: number; results: RecentHit[] }, project: string | null): string {
  const scope = project ? ` in project ${project}` : "";
  if (r.count === 0) return `No memories stored yet${scope}.`;
  const lines = [`${r.count} most important recent memor${r.count === 1 ? "y" : "ies"}${scope} (strength, connections and recency):`, ""];
  r.results.forEach((m, i) => {
    lines.push(`${i + 1}. [${m.short_id}] ${facts(m, [`score ${m.score}`, `strength ${m.effective_strength}`, links(m.connections)])}`);
    lines.push(`   ${indent(clip(m.content, LIST_CONTENT_CHARS, m.short_id))}`);
    lines.push(`   Cite: ${citeView(m)}`);
    lines.push("");
  });
  lines.push("Cite a memory you rely on as (memory <short_id>, <date>, from <source_agent>).");
  return lines.join("\n");
}

/** memsvc_get: provenance header, the full content, then the citation to use. */
export function memoryText(r: { memory: MemoryView; citation: string }): string {
  const m = r.memory;
  const agent = [m.source_agent, m.source_agent_id ? `agent id ${m.source_agent_id}` : null, m.source_domain ? `domain ${m.source_domain}` : null].filter(
    Boolean,
  );
  return [
    `Memory ${m.short_id}`,
    `- id: ${m.id}`,
    `- type: ${m.memory_type}`,
    `- project: ${m.project ?? "(none)"}`,
    `- origin agent: ${agent.length > 1 ? `${agent[0]} (${agent.slice(1).join(", ")})` : agent[0]}`,
    `- date: ${day(m.created_at)}`,
    `- strength: ${m.effective_strength}, connections: ${m.connections}, used ${m.used_count} time${m.used_count === 1 ? "" : "s"}`,
    ...(m.anchors ?? []).flatMap(anchorLines),
    "",
    m.content,
    "",
    `Cite as: ${r.citation}`,
  ].join("\n");
}

/** Longest list of anchored paths in the memsvc_get header. */
const ANCHOR_PATHS_SHOWN = 20;

function anchorLines(a: AnchorView): string[] {
  const paths =
    a.paths.slice(0, ANCHOR_PATHS_SHOWN).join(", ") + (a.paths.length > ANCHOR_PATHS_SHOWN ? ` and ${a.paths.length - ANCHOR_PATHS_SHOWN} more` : "");
  const lines = [`- anchored to: ${a.repo}${a.branch ? ` (${a.branch})` : ""} at ${a.commit.slice(0, 12)}: ${paths}`];
  if (a.stale) {
    const st = a.stale;
    lines.push(`- may be outdated: ${staleNote(st)}${st.last_change ? `, last on ${day(st.last_change)}` : ""} (checked ${day(st.checked_at)})`);
    if (st.changed_paths.length) lines.push(`- changed files: ${st.changed_paths.join(", ")}`);
    if (st.missing_paths.length) lines.push(`- missing files: ${st.missing_paths.join(", ")}`);
  }
  return lines;
}

export function learningsText(list: readonly LearningView[], days: number, project: string | null): string {
  const scope = project ? ` for project ${project} (and global ones)` : "";
  if (list.length === 0)
    return `No learnings from the last ${days} day${days === 1 ? "" : "s"}${scope}. Try a larger days value, or memsvc_search for older experience.`;
  const lines = [`${list.length} learning${list.length === 1 ? "" : "s"} from the last ${days} day${days === 1 ? "" : "s"}${scope}, strongest first:`, ""];
  list.forEach((l, i) => {
    const extra = [`strength ${l.effective_strength}`];
    if (l.tags.length) extra.push(`tags ${l.tags.join(", ")}`);
    if (l.sources.length) extra.push(`from memories ${l.sources.join(", ")}`);
    lines.push(`${i + 1}. [${l.short_id}] ${facts(l, extra)}`);
    lines.push(`   ${indent(clip(l.content, LIST_CONTENT_CHARS, l.short_id))}`);
    lines.push(`   Cite: ${citeView(l)}`);
    lines.push("");
  });
  lines.push("Apply these where they fit; cite one you follow as (memory <short_id>, <date>, from <source_agent>).");
  return lines.join("\n");
}

export function updateText(r: UpdateResult): string {
  const m = r.memory;
  const fields = Object.entries(r.changes);
  if (fields.length === 0) return `Memory ${m.short_id} unchanged: the values given equal the stored ones.`;
  const lines = [`Updated memory ${m.short_id} (${m.id}); ${fields.length} field${fields.length === 1 ? "" : "s"} changed:`];
  for (const [field, { before, after }] of fields) {
    if (field === "content") {
      lines.push("- content before:", clip(before ?? "", CHANGE_CHARS, m.short_id), "- content after:", clip(after ?? "", CHANGE_CHARS, m.short_id));
    } else {
      lines.push(`- ${field}: ${before ?? "(none)"} → ${after ?? "(none)"}`);
    }
  }
  if (r.changes.content) lines.push("The content changed, so its embedding was recomputed.");
  return lines.join("\n");
}

export function historyText(h: HistoryView): string {
  if (h.versions.length === 0) return `Memory ${h.short_id} has no earlier versions: its content was never replaced.`;
  const lines = [
    `Memory ${h.short_id} (${h.id}): ${h.versions.length} earlier version${h.versions.length === 1 ? "" : "s"}, newest first. Current content:`,
    indent(`   ${clip(h.current.content, CHANGE_CHARS, h.short_id)}`),
    "",
  ];
  for (const v of h.versions) {
    const from = v.source_id ? ` (folded in from memory ${v.source_id.slice(0, 8)})` : "";
    const t = v.content.trim();
    const body = t.length > CHANGE_CHARS ? `${t.slice(0, CHANGE_CHARS)}… (cut; GET /memory/history returns all ${t.length} characters)` : t;
    lines.push(
      `version ${v.version} · replaced ${v.replaced_at} by ${v.reason}${from} · ${v.memory_type} · project ${v.project ?? "(none)"}`,
      indent(`   ${body}`),
    );
  }
  lines.push("", `Restore one with memsvc_history {"id": "${h.short_id}", "restore": <version>}.`);
  return lines.join("\n");
}

export function deleteText(r: { id: string; preview: string; links_removed: number }): string {
  return [
    `Deleted memory ${r.id.slice(0, 8)} (${r.id}) permanently, with its embedding and ${r.links_removed} link${r.links_removed === 1 ? "" : "s"}.`,
    "Deleted content (preview):",
    r.preview,
  ].join("\n");
}

/** An AppError as a message the agent can act on (the next step is named). */
export function errorText(e: AppError): string {
  const lines = [e.message];
  const candidates = e.details?.candidates;
  if (Array.isArray(candidates) && candidates.length) {
    lines.push("Matching memories (call again with one of these ids):");
    for (const c of candidates as { id: string; preview: string }[]) lines.push(`- ${c.id}: ${c.preview.replace(/\s+/g, " ")}`);
  }
  if (e.code === "not_found" && /^no memory/.test(e.message)) lines.push("Find ids with memsvc_search or memsvc_recent.");
  return lines.join("\n");
}
