/**
 * A receipt: what one /recall-index answer or one agent search gave the
 * agent, why each memory ranked, what it cost in tokens, and what almost
 * made it. Written off the hot path (writer.ts), read by GET
 * /recall/receipts, `memsvc why`, the sessions page and use detection.
 */
import type { ScoreParts } from "../search";

export type { ScoreParts };

export interface ReceiptMemory {
  id: string;
  score: number;
  parts: ScoreParts;
  /** One line of the memory as listed (the block's gist). */
  gist: string;
  /** Tokens of its line in the block (injected recall lines). */
  tokens?: number;
}

/** Why a candidate did not reach the agent. */
export const DROP_REASONS = ["gate", "suppression", "budget", "threshold", "feedback", "limit"] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export interface ReceiptDrop extends ReceiptMemory {
  reason: DropReason;
}

export type ReceiptKind = "recall" | "search";
export type ReceiptVia = "rest" | "mcp";

export interface NewReceipt {
  /** Made by the writer's caller (the response names it before the row is written). */
  id: string;
  at: number;
  kind: ReceiptKind;
  via: ReceiptVia;
  sessionId: string | null;
  turn: number | null;
  agent: string | null;
  project: string | null;
  /** Redacted and bounded; null when config keeps only the hash. */
  prompt: string | null;
  promptHash: string;
  /** The injected block's (or the search answer's) size in tokens. */
  tokens: number;
  /** The token budget that applied (recall), or null. */
  budget: number | null;
  injected: ReceiptMemory[];
  dropped: ReceiptDrop[];
}

export interface ReceiptRow extends NewReceipt {
  /** Injected memories the agent's following turns relied on (use detection, `useful` feedback). */
  used: string[];
}

/** GET /recall/receipts filters. */
export interface ReceiptFilter {
  sessionId?: string | null;
  agent?: string | null;
  project?: string | null;
  kind?: ReceiptKind | null;
  /** Receipts that injected this memory. */
  memoryId?: string | null;
  /** Paging: receipts written before this one (newest first). */
  before?: { at: number; id: string } | null;
  since?: number | null;
  limit: number;
}

/** One session as the sessions page lists it. */
export interface SessionSummary {
  sessionId: string;
  agent: string | null;
  project: string | null;
  firstAt: number;
  lastAt: number;
  prompts: number;
  tokens: number;
  injected: number;
  used: number;
}
