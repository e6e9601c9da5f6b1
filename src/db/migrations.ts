import m0001 from "./migrations/0001_init.sql" with { type: "text" };

/**
 * Ordered schema migrations, imported as text so they are embedded in the
 * compiled binary. Append new files; never edit an applied one.
 */
export const MIGRATIONS: readonly { version: number; sql: string }[] = [{ version: 1, sql: m0001 }];
