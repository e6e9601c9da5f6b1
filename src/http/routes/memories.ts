import { Elysia } from "elysia";
import { anchorsForRepo, markStale } from "../../core/memories";
import { deleteMemory, fetchMemory, updateMemory } from "../../core/memories";
import { ingestMemory } from "../../core/ingest";
import { memoryHistory, restoreVersion } from "../../core/memories";
import { recent } from "../../core/search";
import type { Services } from "../../core/services";
import { creatorOf } from "../../core/tokens";
import { scopedConnections } from "../../core/graph";
import { AnchorsInput, DeleteInput, HistoryInput, IngestInput, MarkStaleInput, MemoryGetInput, RestoreInput, UpdateInput } from "../../core/memories/schema";
import { RecentInput } from "../../core/search/schema";
import { queryOptions } from "../schema-query";
import { jsonObject } from "../body";
import { principalOf, scopeOf } from "../access";

const RECENT_QUERY = queryOptions(RecentInput);
const MEMORY_QUERY = queryOptions(MemoryGetInput);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const firstOf = (v: unknown) => (Array.isArray(v) ? v[0] : v);

// PATCH /memory takes its id from the body or, as it always has, from ?id=.
const PATCH_BODY = jsonObject(UpdateInput, (body, query) => {
  if (body.id === undefined && query.id !== undefined && query.id !== "") body.id = firstOf(query.id);
});
// DELETE /memory takes its id from ?id= or, as it always has, from a JSON body {"id"}.
const DELETE_QUERY = queryOptions(DeleteInput, (query, body) => {
  if (query.id === undefined && isObject(body) && body.id !== undefined) query.id = body.id;
});

export function memoryRoutes(s: Services) {
  return new Elysia({ name: "memories" })
    .post(
      "/ingest",
      async ({ body, set, request }) => {
        const result = await ingestMemory(s, body, { createdBy: creatorOf(principalOf(request)) });
        set.status = result.id === null ? 200 : 201;
        return result;
      },
      jsonObject(IngestInput),
    )
    .get(
      "/recent",
      async ({ query, request }) => {
        const r = await recent(s, query);
        await scopedConnections(s, scopeOf(request), r.results);
        return r;
      },
      RECENT_QUERY,
    )
    .get(
      "/memory",
      async ({ query, request }) => {
        const view = await fetchMemory(s, query.id, { evidence: query.evidence });
        await scopedConnections(s, scopeOf(request), [view.memory]);
        return view;
      },
      MEMORY_QUERY,
    )
    .get("/anchors", ({ query, request }) => anchorsForRepo(s, query, scopeOf(request)), queryOptions(AnchorsInput))
    .post("/memory/stale", ({ body }) => markStale(s, body), jsonObject(MarkStaleInput))
    .get("/memory/history", ({ query }) => memoryHistory(s, query.id), queryOptions(HistoryInput))
    .post("/memory/restore", ({ body }) => restoreVersion(s, body), jsonObject(RestoreInput))
    .patch("/memory", ({ body }) => updateMemory(s, body), PATCH_BODY)
    .delete("/memory", ({ query }) => deleteMemory(s, query.id), DELETE_QUERY);
}
