import type { ProjectScope } from "../scope";

/** A feedback event as stored: a memory event whose kind is not shown or used, with its JSON detail. */
export interface FeedbackEventRow {
  memoryId: string;
  kind: string;
  at: number;
  detail: string | null;
}

/** What feedback asks of the database (src/store/sqlite/feedback.ts, src/store/postgres/feedback.ts). */
export interface FeedbackStore {
  /** Records one feedback event (inside the caller's transaction when there is one). */
  addEvent(e: FeedbackEventRow): Promise<void>;
  /**
   * The feedback events that may still be in force: those newer than their
   * memory's last change (a rewrite or restore settles wrong, outdated and
   * irrelevant), plus every retire and unretire, of memories that exist.
   */
  liveEvents(): Promise<FeedbackEventRow[]>;
  /** Feedback events per kind in [since, until) (ms); within a scope, of its memories only. */
  counts(since: number, until: number, scope?: ProjectScope): Promise<{ kind: string; n: number }[]>;
}
