import m0001 from "./migrations/0001_init.sql" with { type: "text" };
import m0002 from "./migrations/0002_identity.sql" with { type: "text" };
import m0003 from "./migrations/0003_nightly.sql" with { type: "text" };
import m0004 from "./migrations/0004_evidence.sql" with { type: "text" };
import m0005 from "./migrations/0005_statement_triggers.sql" with { type: "text" };
import m0006 from "./migrations/0006_receipts.sql" with { type: "text" };
import m0007 from "./migrations/0007_tokens.sql" with { type: "text" };
import m0008 from "./migrations/0008_recent_touched.sql" with { type: "text" };
import m0009 from "./migrations/0009_shown_used.sql" with { type: "text" };
import m0010 from "./migrations/0010_vector_projects.sql" with { type: "text" };

/**
 * Ordered schema migrations, imported as text so they are embedded in the
 * compiled binary. `__SCHEMA__` stands for the store's schema (validated as a
 * plain identifier before it is substituted). Append new files named after
 * their capability; never edit an applied one.
 */
export const PG_MIGRATIONS: readonly { version: number; sql: string }[] = [
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
];
