import type { ProjectScope } from "../scope";
import type { NewReceipt, ReceiptFilter, ReceiptRow, SessionSummary } from "./types";

/** What receipts ask of the database (src/store/sqlite/receipts.ts, src/store/postgres/receipts.ts). */
export interface ReceiptStore {
  /** Writes a batch in one transaction. */
  addReceipts(rows: readonly NewReceipt[]): Promise<void>;
  /** Newest first. */
  listReceipts(filter: ReceiptFilter): Promise<ReceiptRow[]>;
  receipt(id: string): Promise<ReceiptRow | null>;
  /** The newest recall receipt that injected this memory. */
  latestShowing(memoryId: string): Promise<ReceiptRow | null>;
  /** Adds ids to the receipt's used list; returns those not already there (each use counts once). */
  addUsed(receiptId: string, ids: readonly string[]): Promise<string[]>;
  /**
   * Use detection's fallback when no receipt says what was injected (receipts
   * off, or pruned): the session's shown state (recall_shown: what it was
   * shown within the suppression window). Marks each id's latest showing
   * used (only a showing of `turn`, when given) and returns `fresh` (counted
   * now) and `already` (that showing was counted before); ids the session
   * holds no showing of are in neither.
   */
  useShown(sessionId: string, ids: readonly string[], turn: number | null): Promise<{ fresh: string[]; already: string[] }>;
  /** Sessions with recall receipts, newest activity first. */
  sessions(limit: number, before: number | null): Promise<SessionSummary[]>;
  /** Tokens injected per day of the window (day 0 first) and how many injected memories were used; within a scope, of receipts of its projects only. */
  dailyTokens(start: number, days: number, scope?: ProjectScope): Promise<{ i: number; tokens: number; injected: number; used: number }[]>;
  /** Drops receipts older than `before` and, past `max`, the oldest; returns how many went. */
  prune(before: number, max: number): Promise<number>;
}
