import type { Storage } from "../../core/storage";
import type { Store as SqliteHandle } from "./open";
import { sqliteMemories } from "./memories";
import { sqliteSearch } from "./search";
import { sqliteRecall } from "./recall";
import { sqliteGraph } from "./graph";
import { sqliteIdentity } from "./identity";
import { sqliteDistill } from "./distill";
import { sqliteNightly } from "./nightly";
import { sqliteAnalytics } from "./analytics";

/** The sqlite engine behind every capability's store interface. */
export function sqliteStorage(h: SqliteHandle): Storage {
  return {
    engine: "sqlite",
    location: h.file,
    memories: sqliteMemories(h),
    search: sqliteSearch(h),
    recall: sqliteRecall(h),
    graph: sqliteGraph(h),
    identity: sqliteIdentity(h),
    distill: sqliteDistill(h),
    nightly: sqliteNightly(h),
    analytics: sqliteAnalytics(h),
    async close() {
      h.close();
    },
  };
}
