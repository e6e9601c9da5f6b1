import { Elysia } from "elysia";
import { anchorsForRepo, markStale } from "../../core/memories";
import { deleteMemory, fetchMemory, ingestMemory, updateMemory } from "../../core/memories";
import { memoryHistory, restoreVersion } from "../../core/memories";
import { recent } from "../../core/search";
import { search } from "../../core/search";
import type { Services } from "../../core/services";
import { invalid } from "../../errors";
import { IngestInput, MemoryGetInput } from "../../core/memories/schema";
import { RecentInput, SearchInput } from "../../core/search/schema";
import { queryOptions } from "../schema-query";
import { jsonObject, objectBody, queryParams } from "../body";
import { plural } from "../../core/text";
import { principalOf } from "../access";

const SEARCH_QUERY = queryOptions(SearchInput);
const RECENT_QUERY = queryOptions(RecentInput);
const MEMORY_QUERY = queryOptions(MemoryGetInput);

export function memoryRoutes(s: Services) {
  return new Elysia({ name: "memories" })
    .post(
      "/ingest",
      async ({ body, set, request }) => {
        const p = principalOf(request);
        const result = await ingestMemory(s, body, { createdBy: p?.via === "token" ? p.name : null });
        set.status = result.id === null ? 200 : 201;
        return result;
      },
      jsonObject(IngestInput),
    )
    .get("/search", ({ query }) => search(s, query), SEARCH_QUERY)
    .get("/recent", ({ query }) => recent(s, query), RECENT_QUERY)
    .get("/memory", ({ query }) => fetchMemory(s, query.id, { evidence: query.evidence }), MEMORY_QUERY)
    .get("/anchors", ({ query }) => anchorsForRepo(s, queryParams(query).repo))
    .post("/memory/stale", ({ body }) => markStale(s, objectBody(body)))
    .get("/memory/history", ({ query }) => memoryHistory(s, queryParams(query).id))
    .post("/memory/restore", ({ body }) => {
      const b = objectBody(body);
      const unknown = Object.keys(b).filter((k) => k !== "id" && k !== "version");
      if (unknown.length) throw invalid(`unknown ${plural(unknown.length, "field")} ${unknown.join(", ")}: the body is {"id", "version"}`);
      return restoreVersion(s, b);
    })
    .patch("/memory", ({ body, query }) => {
      const b = objectBody(body);
      return updateMemory(s, { ...b, id: b.id ?? queryParams(query).id } as Parameters<typeof updateMemory>[1]);
    })
    .delete("/memory", ({ query, body }) => {
      const fromBody = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>).id : undefined;
      return deleteMemory(s, queryParams(query).id ?? fromBody);
    });
}
