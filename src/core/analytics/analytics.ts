import { account, type Account } from "./account";
import type { DashboardInput } from "./schema";
import { growthSeries, recallAdoption, type Growth, type RecallAdoption, type Window } from "./series";
import { isoDate, isoTime } from "../dates";
import { latestDigests, type NightlyDigest } from "../nightly";
import { parseLimit } from "../search";
import type { ProjectScope } from "../scope";
import type { Services } from "../services";
import { DEFAULT_DOMAIN, MEMORY_TYPES, feedbackCounts, feedbackMarks } from "../memories";
import { flushReceipts, gistOf } from "../receipts";
import type { DashboardFigures } from "./store";
import { DASHBOARD_DEFAULT_DAYS, DASHBOARD_DIGESTS, DASHBOARD_MAX_DAYS, DASHBOARD_RETIRE_CANDIDATES, DASHBOARD_TOP_DOMAINS } from "./tuning";

export type { Growth, RecallAdoption } from "./series";

const DAY_MS = 86_400_000;

export interface DashboardCounts {
  memories: number;
  learnings: number;
  links: number;
  /** Distinct domain tags (as GET /index `totals.domains`). */
  domains: number;
}

export interface DomainComposition {
  /** Distinct primary domains among stored memories. */
  primary_domains: number;
  /** The largest primary domains, largest first (ties by name). */
  top: { domain: string; memories: number }[];
  /** Every primary domain past `top`, as one slice. */
  other: { domains: number; memories: number };
}

/** GET /dashboard/data. */
export interface DashboardData {
  generated_at: string;
  window: { days: number; from: string; to: string };
  counts: DashboardCounts;
  growth: Growth;
  domains: DomainComposition;
  recall: RecallAdoption;
  /** The latest nightly digests; null within a scope (a run is store-wide, not per project). */
  nightly: NightlyDigest[] | null;
  /** null within a scope (the server's account, not a project's). */
  account: Account | null;
  receipts: ReceiptFigures;
  /** The projects every figure is narrowed to (a project-scoped token), or null for every project. */
  scope: readonly string[] | null;
}

/** What memory put into prompts over the window (receipts) and what people and agents said about it (feedback). */
export interface ReceiptFigures {
  /** Per day of the window: tokens of the recall blocks injected, memories injected, of them used. */
  days: { date: string; tokens: number; injected: number; used: number }[];
  tokens: number;
  injected: number;
  used: number;
  /** used / injected, or null when nothing was injected. */
  used_share: number | null;
  /** Feedback events of the window, per kind. */
  feedback: Record<string, number>;
  /** Memories shown most and never used: candidates to retire (POST /memory/review {action: "retire"}). */
  shown_never_used: { id: string; short_id: string; project: string | null; shown_count: number; gist: string }[];
}

/**
 * Everything the dashboard draws, in one read of storage (every aggregate
 * answered from indexes on SQLite: ~45 ms at 100k memories and 300k events,
 * bench/dashboard.ts). Daily series cover the last `days` UTC days, today
 * included. Within a scope every figure is of its projects' memories, their
 * events and their projects' receipts, filtered in SQL; nightly digests and
 * the account, which no project owns, are left out (null).
 */
export async function dashboardData(s: Services, input: DashboardInput = {}, scope: ProjectScope = null): Promise<DashboardData> {
  const days = parseLimit(input.days, DASHBOARD_DEFAULT_DAYS, DASHBOARD_MAX_DAYS, "days");
  const now = s.now();
  const end = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  const window: Window = { days, start: end - days * DAY_MS, end };
  const f = await s.storage.analytics.dashboardFigures(window, MEMORY_TYPES, scope);
  return {
    generated_at: isoTime(now),
    window: { days, from: isoDate(window.start), to: isoDate(end - DAY_MS) },
    counts: f.counts,
    growth: growthSeries(f, window),
    domains: domainComposition(f),
    recall: recallAdoption(f, window),
    nightly: scope === null ? await latestDigests(s, DASHBOARD_DIGESTS) : null,
    account: scope === null ? account(s).account : null,
    receipts: await receiptFigures(s, window, scope),
    scope,
  };
}

async function receiptFigures(s: Services, w: Window, scope: ProjectScope): Promise<ReceiptFigures> {
  await flushReceipts(s);
  const marks = await feedbackMarks(s);
  const retired = [...marks.values()].filter((m) => m.retired).length;
  const [daily, feedback, candidates] = await Promise.all([
    s.storage.receipts.dailyTokens(w.start, w.days, scope),
    feedbackCounts(s, w.start, w.end, scope),
    // Retired ones are not candidates any more: ask for as many more.
    s.storage.analytics.shownNeverUsed(DASHBOARD_RETIRE_CANDIDATES + retired, scope),
  ]);
  const unused = candidates.filter((m) => !marks.get(m.id)?.retired).slice(0, DASHBOARD_RETIRE_CANDIDATES);
  const days = daily.map((d) => ({ date: isoDate(w.start + d.i * DAY_MS), tokens: d.tokens, injected: d.injected, used: d.used }));
  const sum = (k: "tokens" | "injected" | "used") => days.reduce((a, d) => a + d[k], 0);
  const injected = sum("injected");
  return {
    days,
    tokens: sum("tokens"),
    injected,
    used: sum("used"),
    used_share: injected ? Math.round((sum("used") / injected) * 1000) / 1000 : null,
    feedback,
    shown_never_used: unused.map((m) => ({ id: m.id, short_id: m.id.slice(0, 8), project: m.project, shown_count: m.shownCount, gist: gistOf(m.content) })),
  };
}

/**
 * Memories per primary domain (highest-weight tag, ties by name, as GET
 * /index and /graph), read from a table triggers keep. A memory without tags
 * counts as DEFAULT_DOMAIN, as /graph draws it.
 */
function domainComposition(f: DashboardFigures): DomainComposition {
  const counted = new Map(f.primaryDomains.map((r) => [r.domain, r.n]));
  const untagged = f.counts.memories - [...counted.values()].reduce((a, b) => a + b, 0);
  if (untagged > 0) counted.set(DEFAULT_DOMAIN, (counted.get(DEFAULT_DOMAIN) ?? 0) + untagged);
  const rows = [...counted.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const rest = rows.slice(DASHBOARD_TOP_DOMAINS);
  return {
    primary_domains: rows.length,
    top: rows.slice(0, DASHBOARD_TOP_DOMAINS).map(([domain, memories]) => ({ domain, memories })),
    other: { domains: rest.length, memories: rest.reduce((a, r) => a + r[1], 0) },
  };
}
