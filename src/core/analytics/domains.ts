import type { Services } from "../services";
import type { ProjectScope } from "../scope";
import { eng as ENGLISH_STOP_WORDS } from "stopword";
import { documentFrequency } from "../search";
import { counted, keywords, stem, STOP_WORDS } from "../text";
import { isoTime } from "../dates";
import {
  DOMAIN_BACKGROUND_CAP_SHARE,
  DOMAIN_BACKGROUND_MIN_CAP,
  DOMAIN_INDEX_CACHE_MS,
  DOMAIN_INDEX_MAX,
  DOMAIN_KEYWORD_CANDIDATES,
  DOMAIN_KEYWORD_MIN_LIFT,
  DOMAIN_KEYWORD_SAMPLE,
  DOMAIN_KEYWORDS,
  DOMAIN_PRIOR_STRENGTH,
} from "./tuning";
import { normalizeTag } from "../memories";

/** One knowledge domain (a project or a topic tag) of GET /index. */
export interface DomainEntry {
  domain: string;
  /** "project" when the domain is a project's own tag, "tag" for a topic. */
  kind: "project" | "tag";
  memories: number;
  learnings: number;
  /** Memories for which this is the strongest tag. */
  primary: number;
  /** Which projects its memories belong to (null: no project), largest first. */
  projects: { project: string | null; memories: number }[];
  /** Words that set its most recent memories apart from the rest of the store, most distinctive first. */
  keywords: string[];
}

export interface ProjectEntry {
  project: string | null;
  memories: number;
  learnings: number;
  /** Its largest topic domains (the project's own tag left out). */
  domains: string[];
}

export interface DomainIndex {
  /** When this index was computed (it is cached briefly: see DOMAIN_INDEX_CACHE_MS). */
  generated_at: string;
  totals: { memories: number; learnings: number; domains: number; projects: number };
  domains: DomainEntry[];
  projects: ProjectEntry[];
}

/**
 * GET /index and memsvc_index: which domains exist, what they hold, how they
 * group by project. Joining every tag to its memory costs about a second at
 * 100k memories, so the result is reused while the store looks unchanged
 * (same count and newest memory), for up to DOMAIN_INDEX_CACHE_MS (an edit
 * of a memory's project shows after that).
 *
 * Within a scope (a project-scoped member) every figure is of the scope's
 * memories, computed afresh (the cache holds the whole store's index), and
 * no keywords are given: they are chosen by how rare a word is across the
 * whole store, which would tell of other projects' words.
 */
export async function domainIndex(s: Services, scope: ProjectScope = null): Promise<DomainIndex> {
  if (scope !== null) return computeDomainIndex(s, scope);
  const now = s.now();
  const fp = await s.storage.analytics.memoriesFingerprint();
  const fingerprint = `${fp.maxSeq}:${fp.count}`;
  const hit = s.state.domainIndex;
  if (hit && hit.fingerprint === fingerprint && now - hit.at < DOMAIN_INDEX_CACHE_MS) return hit.index;
  const index = await computeDomainIndex(s);
  s.state.domainIndex = { at: now, fingerprint, index };
  return index;
}

async function computeDomainIndex(s: Services, scope: ProjectScope = null): Promise<DomainIndex> {
  // Two plain scans aggregated here: a JOIN of every tag to its memory row
  // (plus a window function for the primary domain) took seconds at 100k on SQLite.
  const data = await s.storage.analytics.domainRows(scope);
  const totals = data.totals;
  const memo = new Map<string, { project: string | null; learning: boolean }>();
  for (const m of data.memories) memo.set(m.id, { project: m.project, learning: m.memoryType === "learnings" });
  const cells = new Map<string, { domain: string; project: string | null; memories: number; learnings: number }>();
  const bestTag = new Map<string, { tag: string; weight: number }>();
  for (const t of data.tags) {
    const m = memo.get(t.memoryId);
    if (!m) continue;
    // A memory's primary domain is its highest-weight tag (ties: first by name).
    const b = bestTag.get(t.memoryId);
    if (!b || t.weight > b.weight || (t.weight === b.weight && t.tag < b.tag)) bestTag.set(t.memoryId, { tag: t.tag, weight: t.weight });
    const key = `${t.tag}\u0000${m.project ?? ""}\u0000${m.project === null ? 0 : 1}`;
    let c = cells.get(key);
    if (!c) cells.set(key, (c = { domain: t.tag, project: m.project, memories: 0, learnings: 0 }));
    c.memories++;
    if (m.learning) c.learnings++;
  }
  const primary = new Map<string, number>();
  for (const b of bestTag.values()) primary.set(b.tag, (primary.get(b.tag) ?? 0) + 1);
  const rows = [...cells.values()];
  const domainCount = new Set(rows.map((r) => r.domain)).size;
  const projectTags = new Set<string>();
  const byDomain = new Map<string, DomainEntry>();
  const byProject = new Map<string | null, ProjectEntry & { sizes: Map<string, number> }>();
  for (const r of rows) {
    let d = byDomain.get(r.domain);
    if (!d)
      byDomain.set(
        r.domain,
        (d = { domain: r.domain, kind: "tag", memories: 0, learnings: 0, primary: primary.get(r.domain) ?? 0, projects: [], keywords: [] }),
      );
    d.memories += r.memories;
    d.learnings += r.learnings;
    d.projects.push({ project: r.project, memories: r.memories });
    if (r.project !== null && normalizeTag(r.project) === r.domain) projectTags.add(r.domain);
  }
  for (const r of data.projects) byProject.set(r.project, { ...r, domains: [], sizes: new Map() });
  for (const r of rows) {
    const p = byProject.get(r.project);
    if (p && !(r.project !== null && normalizeTag(r.project) === r.domain)) p.sizes.set(r.domain, r.memories);
  }
  const domains = [...byDomain.values()].sort((a, b) => b.memories - a.memories || a.domain.localeCompare(b.domain)).slice(0, DOMAIN_INDEX_MAX);
  for (const d of domains) {
    if (projectTags.has(d.domain)) d.kind = "project";
    d.projects.sort((a, b) => b.memories - a.memories);
  }
  if (scope === null) await addKeywords(s, domains, totals.memories);
  const projects = [...byProject.values()].slice(0, DOMAIN_INDEX_MAX).map(({ sizes, ...p }) => ({
    ...p,
    domains: [...sizes.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, DOMAIN_KEYWORDS)
      .map(([tag]) => tag),
  }));
  return {
    generated_at: isoTime(s.now()),
    totals: { memories: totals.memories, learnings: totals.learnings ?? 0, domains: domainCount, projects: totals.projects },
    domains,
    projects,
  };
}

/**
 * Stop words: ours (question and glue words, shared with search) and the
 * `stopword` package's English list, maintained upstream. Neither holds
 * "uses", "every" or "main": those are common in one store and rare in
 * another, which is what the distinctiveness score below is for.
 */
const DOMAIN_STOP_WORDS = new Set([...STOP_WORDS, ...ENGLISH_STOP_WORDS]);

/**
 * Top keywords per domain: the words that set its most recent memories
 * apart from the rest of the store. For each candidate word (in at least two
 * of the sampled memories) the share of the sample holding it is compared
 * with its share of the rest of the store (document counts from the FTS
 * index, shared with search's cache), both smoothed towards the store-wide
 * rate by a prior of a few pseudo-memories (an informative Dirichlet prior,
 * as in Monroe, Colaresi & Quinn 2008). A word must be at least twice as
 * common in the domain (`lift`); the survivors are ranked by how many of the
 * domain's memories hold them times that lift, so "uses", "every" or "main",
 * found in most memories of every domain, never qualify however often a
 * domain uses them, and a frequent word of the domain's own beats a rare one.
 */
async function addKeywords(s: Services, domains: DomainEntry[], storeSize: number): Promise<void> {
  const cap = Math.max(DOMAIN_BACKGROUND_MIN_CAP, Math.floor(storeSize * DOMAIN_BACKGROUND_CAP_SHARE)) + 1;
  for (const d of domains) {
    const own = new Set(d.domain.split("-").map(stem));
    const counts = new Map<string, { df: number; surface: Map<string, number> }>();
    const docs = await s.storage.analytics.domainSample(d.domain, DOMAIN_KEYWORD_SAMPLE);
    for (const content of docs) {
      const seen = new Set<string>();
      for (const w of keywords(content.slice(0, 2000))) {
        if (w.length < 3 || /^\d+$/.test(w) || DOMAIN_STOP_WORDS.has(w)) continue;
        const st = stem(w);
        if (own.has(st)) continue;
        let c = counts.get(st);
        if (!c) counts.set(st, (c = { df: 0, surface: new Map() }));
        c.surface.set(w, (c.surface.get(w) ?? 0) + 1);
        if (!seen.has(st)) {
          seen.add(st);
          c.df++;
        }
      }
    }
    const minDf = docs.length >= 3 ? 2 : 1;
    const scored: { word: string; lift: number; score: number }[] = [];
    for (const c of [...counts.values()]
      .filter((c) => c.df >= minDf)
      .sort((a, b) => b.df - a.df)
      .slice(0, DOMAIN_KEYWORD_CANDIDATES)) {
      const word = [...c.surface.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0][0];
      const lift = domainLift(c.df, docs.length, await documentFrequency(s, word, cap), storeSize);
      scored.push({ word, lift, score: c.df * lift });
    }
    d.keywords = scored
      .filter((x) => x.lift >= DOMAIN_KEYWORD_MIN_LIFT)
      .sort((a, b) => b.score - a.score || a.word.localeCompare(b.word))
      .slice(0, DOMAIN_KEYWORDS)
      .map((x) => x.word);
  }
}

/**
 * ln of how many times more common a word is in a domain's sample (in
 * `inDomain` of `sampleSize` memories) than in the rest of the store
 * (`inStore` of `storeSize` memories hold it, the sample included), both
 * rates smoothed towards the store's by a prior of DOMAIN_PRIOR_STRENGTH
 * pseudo-memories (fewer in a small store, where it would drown the counts).
 */
export function domainLift(inDomain: number, sampleSize: number, inStore: number, storeSize: number): number {
  const a0 = Math.min(DOMAIN_PRIOR_STRENGTH, storeSize / 4);
  const aw = (a0 * (Math.min(inStore, storeSize) + 0.5)) / (storeSize + 1);
  const rest = Math.max(0, inStore - inDomain);
  const restSize = Math.max(rest, storeSize - sampleSize);
  return Math.log((inDomain + aw) / (sampleSize + a0)) - Math.log((rest + aw) / (restSize + a0));
}

/** The tool's text form: one line per domain with counts, projects and keywords. */
export function renderDomainIndex(idx: DomainIndex): string {
  if (idx.totals.memories === 0) return "No memories stored yet.";
  const lines = [
    `${counted(idx.totals.memories, "memory", "memories")} (${counted(idx.totals.learnings, "learning")}) in ${counted(idx.totals.domains, "domain")} and ${counted(idx.totals.projects, "project")}.`,
    "",
    "Domains:",
  ];
  for (const d of idx.domains) {
    const projects = d.projects.slice(0, 4).map((p) => `${p.project ?? "(no project)"} ${p.memories}`);
    lines.push(
      `- ${d.domain} (${d.kind}): ${counted(d.memories, "memory", "memories")}, ${counted(d.learnings, "learning")}${d.kind === "tag" ? `; projects: ${projects.join(", ")}` : ""}${d.keywords.length ? `; keywords: ${d.keywords.join(", ")}` : ""}`,
    );
  }
  lines.push("", "Projects:");
  for (const p of idx.projects)
    lines.push(
      `- ${p.project ?? "(no project)"}: ${counted(p.memories, "memory", "memories")}, ${counted(p.learnings, "learning")}${p.domains.length ? `; domains: ${p.domains.join(", ")}` : ""}`,
    );
  return lines.join("\n");
}
