import type { ProjectScope } from "../scope";

/**
 * What analytics/ needs from storage: the dashboard's figures (counts, daily
 * growth, primary domains, recall adoption) in one read, and the rows the
 * domain index aggregates. Account data comes from config, not storage.
 * One implementation per engine: src/store/sqlite/analytics.ts and src/store/postgres/analytics.ts.
 * Every method is async (PostgreSQL answers over the network) and reads only.
 */
export interface AnalyticsStore {
  /**
   * Every figure the dashboard draws, read in one transaction so they describe
   * one moment while captures write. Daily counts cover `days` UTC days from
   * `start` (ms); day i is [start + i days, start + (i+1) days). Within a
   * scope, every figure is of its memories only (and of their events; types
   * are the known ones and those its memories have).
   */
  dashboardFigures(window: { start: number; days: number }, knownTypes: readonly string[], scope?: ProjectScope): Promise<DashboardFigures>;
  /** Count and newest seq of the memories: the domain index's cache key. */
  memoriesFingerprint(): Promise<{ count: number; maxSeq: number | null }>;
  /** What the domain index aggregates: every memory's project and type, every tag row, per-project counts; within a scope, of its memories only. */
  domainRows(scope?: ProjectScope): Promise<DomainRows>;
  /** Memories shown most and never used (candidates to retire), most shown first; within a scope, of its memories only. */
  shownNeverUsed(limit: number, scope?: ProjectScope): Promise<{ id: string; content: string; project: string | null; shownCount: number }[]>;
  /** Contents of the newest `limit` memories tagged `tag`, newest first. */
  domainSample(tag: string, limit: number): Promise<string[]>;
}

export interface DashboardFigures {
  counts: { memories: number; learnings: number; links: number; domains: number };
  /** Memories created before the window. */
  growthBase: number;
  /** `knownTypes`, then every other memory_type stored, in name order. */
  types: string[];
  /** Memories created per day of the window and type (every day and type present). */
  growthPerDay: { i: number; type: string; n: number }[];
  /** Memories per primary domain (memories without tags are not in it). */
  primaryDomains: { domain: string; n: number }[];
  recall: { shown: number; used: number; memories: number; neverShown: number; neverUsed: number };
  /** Showings and uses per day of the window, day 0 first. */
  recallPerDay: { i: number; shown: number; used: number }[];
}

export interface DomainRows {
  totals: { memories: number; learnings: number; projects: number };
  memories: { id: string; project: string | null; memoryType: string }[];
  tags: { memoryId: string; tag: string; weight: number }[];
  /** Per project (null: none), largest first. */
  projects: { project: string | null; memories: number; learnings: number }[];
}
