import type { Services } from "../services";
import type { Storage } from "../storage";

export type StepName = "learn" | "recheck" | "merge" | "decay" | "prune";
export type StepState = "pending" | "done" | "incomplete" | "skipped";
// recheck before merge: a rewritten memory is compared like any other.
export const STEPS: readonly StepName[] = ["learn", "recheck", "merge", "decay", "prune"];

/** What the re-check step did (see recheck.ts); absent in digests of runs before 0.17. */
export interface RecheckDigest {
  /** Stale-marked memories with a mark the model has not answered for yet. */
  due: number;
  /** ...of which have no evidence (anchored through /ingest, or distill.keepEvidence off): their mark stays. */
  no_evidence: number;
  confirmed: number;
  rewritten: number;
  retired: number;
  /** Answers that were no usable verdict: nothing changed, the mark stays (and is not asked about again). */
  unusable: number;
  /** Model calls that failed or timed out: nothing changed, the next run asks again. */
  failed: number;
  /** Per memory re-checked (first 50): short id, verdict ("unusable", "failed" included), the model's reason. */
  checks: { id: string; verdict: string; reason: string }[];
}

/** What one nightly run did; stored as JSON in nightly_runs.digest (the dashboard shows it). */
export interface NightlyDigest {
  run_id: number | null;
  day: string;
  /** "running", "done", "partial" (learnings owed: no model configured, or it failed; a rerun with a model resumes), or "dry-run". */
  status: "running" | "done" | "partial" | "dry-run";
  forced: boolean;
  started_at: string;
  finished_at: string | null;
  /** The language model used, or null in recall-only operation. */
  model: string | null;
  /** Memories of the day (created or updated in it, learnings excluded). */
  considered: number;
  /** ...of which were read by the model. */
  read: number;
  /** Learnings written, and their short ids (first 50). */
  written: number;
  learnings: string[];
  /** Learnings the model proposed that were unusable (no valid source, too short, over the per-call cap). */
  rejected: number;
  merged: number;
  merges: { kept: string; dropped: string }[];
  /** Memories deleted by pruning. */
  dropped: number;
  /** Ignored memories whose strength was lowered. */
  decayed: number;
  /** Feedback given on the day (wrong, outdated, useful, irrelevant, retired), as counted by the decay step. */
  feedback?: Record<string, number>;
  /**
   * What feedback held back (held.ts: marked wrong or outdated and not yet
   * reviewed, or retired): the day's memories not sent to the model, and
   * near-duplicate pairs left unmerged. Such memories are never pruned either.
   */
  held_back?: { learn: number; merge: number };
  /** Recall sessions idle past their time-to-live, forgotten. */
  sessions_expired: number;
  /** Fragments /distill's substance gate rejected since the last run, by reason; written to the log, then forgotten. */
  dropped_fragments: { count: number; by_reason: Record<string, number> };
  model_calls: number;
  max_model_calls: number;
  /** Work left undone, and why (no model, call cap, model failure). */
  skipped: { step: StepName; reason: string; memories?: number }[];
  errors: string[];
  steps: Record<StepName, StepState>;
  recheck?: RecheckDigest;
  resumed: number;
}

/** Per-step progress, persisted in the same transaction as the step's work. */
export interface NightlyCursor {
  /** Last (project key, seq) of the day's memories handed to the model. */
  learn?: [string, number];
  /** Last seq examined for near-duplicates. */
  merge?: number;
}

export interface NightlyProgress {
  day: string;
  step: StepName;
  message: string;
  done?: number;
  total?: number;
}

export interface NightlyOptions {
  /** UTC day "YYYY-MM-DD"; default yesterday (UTC). */
  day?: string;
  /** Run again even when the day was already consolidated. */
  force?: boolean;
  /** Report what would be done; write nothing. */
  dryRun?: boolean;
  /** Stops the run between units of work; it resumes on the next run for that day. */
  signal?: AbortSignal;
  progress?: (event: NightlyProgress) => void;
}

export interface NightlyOutcome {
  /** false when nothing ran (already done, or another process is running it). */
  ran: boolean;
  message: string;
  digest: NightlyDigest | null;
}

/** Everything a step needs; `save` persists cursor and digest (inside the step's transaction). */
export interface RunContext {
  s: Services;
  day: string;
  /** The day in epoch ms, [start, end). */
  start: number;
  end: number;
  digest: NightlyDigest;
  cursor: NightlyCursor;
  dryRun: boolean;
  signal?: AbortSignal;
  progress(step: StepName, message: string, done?: number, total?: number): void;
  /**
   * Persists cursor and digest and renews the lease; pass the unit's
   * transaction so they commit with its work. Throws NightlyLeaseLost when
   * another server has taken the run over (the transaction then rolls back).
   */
  save(tx?: Storage): Promise<void>;
  /** Throws NightlyInterrupted when the run was asked to stop. */
  checkpoint(): void;
}

export class NightlyInterrupted extends Error {
  constructor(day: string) {
    super(`nightly run for ${day} interrupted; the next run for that day resumes it`);
    this.name = "NightlyInterrupted";
  }
}

/** This server was silent past the lease and another one took its run over: it stops without writing. */
export class NightlyLeaseLost extends NightlyInterrupted {
  constructor(day: string) {
    super(day);
    this.message = `nightly run for ${day} was taken over by another server (this one was silent past the lease); it stops here`;
    this.name = "NightlyLeaseLost";
  }
}
