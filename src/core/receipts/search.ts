import { search, type SearchExplain, type SearchInput, type SearchResult } from "../search";
import type { Services } from "../services";
import { parseSessionId } from "../session-id";
import { RECEIPT_DROPPED_MAX } from "./tuning";
import type { ReceiptVia } from "./types";
import { recordReceipt } from "./writer";

/** Who searched: the REST route or the MCP tool, the agent when it names itself, and its session when known. */
export interface SearchCaller {
  via: ReceiptVia;
  agent: string | null;
  /** REST: the X-Memsvc-Session header (searchSessionOf); MCP: the transport's session id. */
  sessionId?: string | null;
}

/**
 * REST's `X-Memsvc-Session: <id>`: the agent session a search belongs to, so
 * its receipt sits with that session's recall receipts (GET /recall/receipts,
 * `memsvc why --session`). Absent: no session; blank or over-long: a 400, as
 * /recall-index's session_id.
 */
export function searchSessionOf(header: string | null): string | null {
  return header === null ? null : parseSessionId(header, "X-Memsvc-Session header");
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
