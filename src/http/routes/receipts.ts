import { Elysia } from "elysia";
import { reviewMemory } from "../../core/memories";
import { feedbackFromAnywhere, listReceipts, listSessions, markUsedFromReceipt, searchWithReceipt } from "../../core/receipts";
import { FeedbackInput, ReceiptsQuery, ReviewInput, SearchQuery, SessionsQuery, UsedInput } from "../../core/receipts/schema";
import type { Services } from "../../core/services";
import { jsonObject } from "../body";
import { queryOptions } from "../schema-query";

/** Receipts (what memory gave the agent), use detection, feedback, and the agent search that leaves a receipt. */
export function receiptRoutes(s: Services) {
  return new Elysia({ name: "receipts" })
    .get("/recall/receipts", ({ query }) => listReceipts(s, query), queryOptions(ReceiptsQuery))
    .get("/recall/sessions", ({ query }) => listSessions(s, query), queryOptions(SessionsQuery))
    .post("/recall/used", ({ body }) => markUsedFromReceipt(s, body), jsonObject(UsedInput))
    .post("/feedback", ({ body }) => feedbackFromAnywhere(s, body, "rest"), jsonObject(FeedbackInput))
    .post("/memory/review", ({ body }) => reviewMemory(s, body, "rest"), jsonObject(ReviewInput))
    .get("/search", ({ query }) => searchWithReceipt(s, query, { via: "rest", agent: query.agent ?? null, sessionId: query.session_id ?? null }), queryOptions(SearchQuery));
}
