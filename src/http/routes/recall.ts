import { Elysia } from "elysia";
import { domainIndex } from "../../core/analytics";
import { learnings } from "../../core/nightly";
import { recallIndex } from "../../core/recall";
import type { Services } from "../../core/services";
import { objectBody, queryParams } from "../body";

export function recallRoutes(s: Services) {
  const learningsHandler = async ({ query }: { query: Record<string, unknown> }) => {
    const q = queryParams(query);
    return await learnings(s, { days: q.days, project: q.project });
  };
  return new Elysia({ name: "recall" })
    .post("/recall-index", ({ body }) => recallIndex(s, objectBody(body)))
    .get("/learnings", learningsHandler)
    .get("/lessons", learningsHandler)
    .get("/index", async () => await domainIndex(s));
}
