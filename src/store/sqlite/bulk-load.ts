import type { Database } from "bun:sqlite";

/**
 * Bulk writes (an import's batch of memories, a batch of links) do once per
 * batch what some triggers do once per row: the triggers named here are
 * dropped for the batch and created again from their own SQL before it ends,
 * inside the caller's transaction, so a rollback or a crash leaves the schema
 * (and every row) as it was. Measured per imported memory in
 * docs/decisions/import-bulk-load.md.
 *
 * A trigger's DROP and CREATE change the schema cookie: other connections and
 * this one's cached statements prepare again once (a few statements a batch).
 */
export function withTriggersSuspended<T>(db: Database, names: readonly string[], fn: () => T): T {
  if (!db.inTransaction) throw new Error("withTriggersSuspended runs inside a transaction");
  const sqlOf = db.query<{ name: string; sql: string }, [string]>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (SELECT value FROM json_each(?))",
  );
  const saved = sqlOf.all(JSON.stringify(names));
  if (saved.length !== names.length)
    throw new Error(`bulk load: triggers missing from the schema: ${names.filter((n) => !saved.some((s) => s.name === n)).join(", ")}`);
  for (const t of saved) db.run(`DROP TRIGGER ${t.name}`);
  const out = fn();
  for (const t of saved) db.run(t.sql);
  return out;
}
