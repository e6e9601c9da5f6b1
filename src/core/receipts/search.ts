import { search, type SearchExplain, type SearchInput, type SearchResult } from "../search";
import type { Services } from "../services";
import { RECEIPT_DROPPED_MAX } from "./tuning";
import type { ReceiptVia } from "./types";
import { recordReceipt } from "./writer";

/** Who searched: the REST route or the MCP tool, and the agent when it names itself. */
export interface SearchCaller {
  via: ReceiptVia;
  agent: string | null;
  sessionId?: string | null;
}

/**
 * An agent's search (GET /search, memsvc_search) with its receipt: the
 * results with their score parts, the near misses (past the limit or under
 * min_score) and the answer's size in tokens (counted when the receipt is
 * written, not before the answer goes out).
 */
export async function searchWithReceipt(s: Services, input: SearchInput, caller: SearchCaller): Promise<SearchResult> {
  if (!s.config.recall.receipts) return search(s, input);
  const explain: SearchExplain = { parts: new Map(), dropped: [], keep: RECEIPT_DROPPED_MAX };
  const result = await search(s, input, undefined, explain);
  recordReceipt(s, {
    id: crypto.randomUUID(),
    at: s.now(),
    kind: "search",
    via: caller.via,
    sessionId: caller.sessionId ?? null,
    turn: null,
    agent: caller.agent,
    project: typeof input.project === "string" && input.project.trim() ? input.project.trim() : null,
    rawPrompt: result.query,
    countText: result.results.map((r) => r.content).join("\n"),
    tokens: 0,
    budget: null,
    injected: result.results.map((r) => ({ id: r.id, score: r.score, parts: explain.parts.get(r.id)!, content: r.content })),
    dropped: explain.dropped.map((d) => ({ id: d.id, score: d.score, parts: d.parts, content: d.content, reason: d.reason })),
  });
  return result;
}
