import type { Storage } from "../../core/storage";
import type { PgHandle } from "./open";
import { pgMemories } from "./memories";
import { pgMemoriesBulk } from "./memories-bulk";
import { pgSearch } from "./search";
import { pgRecall } from "./recall";
import { pgGraph } from "./graph";
import { pgIdentity } from "./identity";
import { pgDistill } from "./distill";
import { pgNightly } from "./nightly";
import { pgAnalytics } from "./analytics";

/** The postgres engine behind every capability's store interface. */
export function pgStorage(h: PgHandle): Storage {
  return {
    engine: "postgres",
    location: h.location,
    memories: { ...pgMemories(h), ...pgMemoriesBulk(h) },
    search: pgSearch(h),
    recall: pgRecall(h),
    graph: pgGraph(h),
    identity: pgIdentity(h),
    distill: pgDistill(h),
    nightly: pgNightly(h),
    analytics: pgAnalytics(h),
    async transaction(_fn) {
      throw new Error("the PostgreSQL engine is not built yet");
    },
    async close() {
      await h.close();
    },
  };
}
