import m0001 from "./migrations/0001_init.sql" with { type: "text" };
import m0002 from "./migrations/0002_recall.sql" with { type: "text" };
import m0003 from "./migrations/0003_analytics.sql" with { type: "text" };
import m0004 from "./migrations/0004_recent.sql" with { type: "text" };
import m0005 from "./migrations/0005_dropped.sql" with { type: "text" };
import m0006 from "./migrations/0006_history.sql" with { type: "text" };
import m0007 from "./migrations/0007_calibration.sql" with { type: "text" };
import m0008 from "./migrations/0008_vector_changes.sql" with { type: "text" };
import m0009 from "./migrations/0009_anchors.sql" with { type: "text" };
import m0010 from "./migrations/0010_nightly.sql" with { type: "text" };
import m0011 from "./migrations/0011_evidence.sql" with { type: "text" };
import m0012 from "./migrations/0012_recent_walk.sql" with { type: "text" };
import m0013 from "./migrations/0013_rank_narrow.sql" with { type: "text" };
import m0014 from "./migrations/0014_link_count_partial.sql" with { type: "text" };
import m0015 from "./migrations/0015_row_counts.sql" with { type: "text" };
import m0016 from "./migrations/0016_receipts.sql" with { type: "text" };
import m0017 from "./migrations/0017_tokens.sql" with { type: "text" };
import m0018 from "./migrations/0018_shown_used.sql" with { type: "text" };

/**
 * Ordered schema migrations, imported as text so they are embedded in the
 * compiled binary. Append new files; never edit an applied one.
 */
export const MIGRATIONS: readonly { version: number; sql: string }[] = [
  { version: 1, sql: m0001 },
  { version: 2, sql: m0002 },
  { version: 3, sql: m0003 },
  { version: 4, sql: m0004 },
  { version: 5, sql: m0005 },
  { version: 6, sql: m0006 },
  { version: 7, sql: m0007 },
  { version: 8, sql: m0008 },
  { version: 9, sql: m0009 },
  { version: 10, sql: m0010 },
  { version: 11, sql: m0011 },
  { version: 12, sql: m0012 },
  { version: 13, sql: m0013 },
  { version: 14, sql: m0014 },
  { version: 15, sql: m0015 },
  { version: 16, sql: m0016 },
  { version: 17, sql: m0017 },
  { version: 18, sql: m0018 },
];
