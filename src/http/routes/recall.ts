import { Elysia } from "elysia";
import { domainIndex } from "../../core/analytics";
import { learnings } from "../../core/nightly";
import { recallIndex } from "../../core/recall";
import type { Services } from "../../core/services";
import type { LearningsInput as LearningsQuery } from "../../core/nightly/schema";
import { jsonObject } from "../body";
import { LearningsInput } from "../../core/nightly/schema";
import { RecallIndexInput, RecallIndexQuery } from "../../core/recall/schema";
import { queryOptions } from "../schema-query";
import { principalOf, scopeOf } from "../access";

const LEARNINGS_QUERY = queryOptions(LearningsInput);

export function recallRoutes(s: Services) {
  const learningsHandler = ({ query }: { query: LearningsQuery }) => learnings(s, query);
  return new Elysia({ name: "recall" })
    .post(
      "/recall-index",
      ({ body, query, request }) => {
        const p = principalOf(request);
        return recallIndex(s, body, {
          explain: query.explain === "true" || query.explain === "1",
          caller: p ? { scope: p.projects, member: p.name } : undefined,
        });
      },
      {
        ...jsonObject(RecallIndexInput),
        query: RecallIndexQuery,
      },
    )
    .get("/learnings", learningsHandler, LEARNINGS_QUERY)
    .get("/lessons", learningsHandler, LEARNINGS_QUERY)
    .get("/index", async ({ request }) => await domainIndex(s, scopeOf(request)));
}
