import { Elysia } from "elysia";
import { reviewMemory } from "../../core/memories";
import { feedbackFromAnywhere, listReceipts, listSessions, markUsedFromReceipt, searchSessionOf, searchWithReceipt } from "../../core/receipts";
import { FeedbackInput, ReceiptsQuery, ReviewInput, SessionsQuery, UsedInput } from "../../core/receipts/schema";
import { SearchInput } from "../../core/search/schema";
import type { Services } from "../../core/services";
import { scopedConnections } from "../../core/graph";
import { scopeOf } from "../access";
import { jsonObject } from "../body";
import { queryOptions } from "../schema-query";

/** `X-Memsvc-Agent: <name>`: the agent searching, named on the search's receipt (a harness or tool name; else none). */
function agentOf(request: Request): string | null {
  const a = request.headers.get("x-memsvc-agent")?.trim().toLowerCase() ?? "";
  return /^[a-z0-9][a-z0-9_.-]{0,63}$/.test(a) ? a : null;
}

/** Receipts (what memory gave the agent), use detection, feedback, and the agent search that leaves a receipt. */
export function receiptRoutes(s: Services) {
  return (
    new Elysia({ name: "receipts" })
      .get("/recall/receipts", ({ query }) => listReceipts(s, query), queryOptions(ReceiptsQuery))
      .get("/recall/sessions", ({ query }) => listSessions(s, query), queryOptions(SessionsQuery))
      .post("/recall/used", ({ body }) => markUsedFromReceipt(s, body), jsonObject(UsedInput))
      .post("/feedback", ({ body }) => feedbackFromAnywhere(s, body, "rest"), jsonObject(FeedbackInput))
      .post("/memory/review", ({ body }) => reviewMemory(s, body, "rest"), jsonObject(ReviewInput))
      // The search of GET /search and memsvc_search (one schema); who asks, and in which session, come in headers: they are no search parameters.
      .get(
        "/search",
        async ({ query, request }) => {
          const sessionId = searchSessionOf(request.headers.get("x-memsvc-session"));
          const r = await searchWithReceipt(s, query, { via: "rest", agent: agentOf(request), sessionId });
          await scopedConnections(s, scopeOf(request), r.results);
          return r;
        },
        queryOptions(SearchInput),
      )
  );
}
