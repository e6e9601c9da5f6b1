import { existsSync, realpathSync } from "node:fs";
import { hostname } from "node:os";
import { loadConfig, SCHEMA_NAME } from "../config";
import { agentDir, agentFolders, readScope } from "../core/identity";
import { migrateStore } from "../core/memories/migrate";
import { AppError } from "../errors";
import { openStorage } from "../store/open";
import { parseFlags, UsageError } from "./args";
import { progressLine } from "./progress";
import { counted } from "../core/text";
import type { Storage } from "../core/storage";

export const MIGRATE_HELP = `memsvc migrate --to <postgres url> [--schema <name>] [--batch <n>]

Copies this home's SQLite store into a PostgreSQL database (with pgvector):
every memory with its id, seq, dates, strength, counters, tags and vector,
links, earlier versions, anchors, adoption events and session segments.
Batched: each batch is one transaction that also stores a cursor in the
target's meta, so an interrupted run (Ctrl-C, a lost connection, a killed
process) continues where it stopped when run again; a run after completion
changes nothing. Stop the local server first: writes made during the copy
may be missed.

--to       the target (default: env MEMSVC_DATABASE_URL); the password is never printed
--schema   the schema to fill (default: config database_schema, "memsvc")
--batch    rows per batch (default 500)

Not copied: recall-index state (per-session, lives hours), nightly run
records, embedder calibration (recomputed), the distiller's dropped-fragment
queue. The identity folder's sections are copied into the database, where
servers on PostgreSQL read them (a section of the same name there is
overwritten by the laptop's).`;

export async function runMigrate(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { to: { type: "string" }, schema: { type: "string" }, batch: { type: "string" } });
  if (values.help) {
    console.log(MIGRATE_HELP);
    return 0;
  }
  const config = loadConfig();
  const url = values.to ?? process.env.MEMSVC_DATABASE_URL;
  if (!url) throw new UsageError("give the target with --to <postgres url> (or set MEMSVC_DATABASE_URL)");
  // The message never repeats the URL: it may hold a password.
  if (!/^postgres(ql)?:\/\/./.test(url)) throw new UsageError("--to must be a postgres:// or postgresql:// URL");
  const schema = values.schema ?? config.database.schema;
  if (!SCHEMA_NAME.test(schema)) throw new UsageError("--schema must be a plain schema name (lower-case letters, digits and _)");
  const batch = values.batch === undefined ? undefined : Number(values.batch);
  if (batch !== undefined && (!Number.isInteger(batch) || batch < 1 || batch > 10_000)) throw new UsageError("--batch must be an integer from 1 to 10000");
  if (!existsSync(config.paths.db)) throw new UsageError(`no database at ${config.paths.db}`);

  const source = openStorage({ ...config, storage: "sqlite" });
  const target = openStorage({ ...config, storage: "postgres", database: { ...config.database, url, schema } }, { pool: 2 });
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const bar = progressLine();
  try {
    // Connect (and create the schema) before drawing anything: a wrong URL is one clear line.
    await target.ready();
    const r = await migrateStore(source, target, {
      sourceId: `${hostname()}:${realpathSync(config.paths.db)}`,
      batch,
      signal: abort.signal,
      progress: (p) =>
        bar.update(p.memories, p.totalMemories, `${p.table}: ${p.memories}/${counted(p.totalMemories, "memory", "memories")}, ${counted(p.rows, "row")}`),
    });
    const c = r.copied;
    const what = `${counted(c.memories, "memory", "memories")}, ${counted(c.links, "link")}, ${counted(c.history, "earlier version")}, ${counted(c.anchors, "anchor")}, ${counted(c.events, "adoption event")}, ${counted(c.segments, "segment")}`;
    if (r.status === "already-done") bar.done(`already migrated to ${target.location} (schema ${schema}): ${what}; nothing to do`);
    else bar.done(`migrated ${what} to ${target.location} (schema ${schema})${r.resumed ? ", resuming an interrupted run" : ""}`);
    const names = await copyIdentity(config.paths.identity, target);
    if (names.length)
      console.log(`copied ${counted(names.length, "identity section")} into the database (${names.slice(0, 5).join(", ")}${names.length > 5 ? ", ..." : ""})`);
    return 0;
  } catch (e) {
    if (e instanceof AppError || (e as Error).name === "PgUnavailableError") {
      bar.done(`memsvc migrate: ${(e as Error).message}`);
      return abort.signal.aborted ? 130 : 1;
    }
    throw e;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await source.close();
    await target.close();
  }
}

/**
 * On PostgreSQL identity sections live in the database (every server reads
 * them there, never its home's folder): the laptop's folder goes in, each
 * section keeping its file's mtime. Upserts, so an interrupted run's rerun
 * writes them all again.
 */
async function copyIdentity(root: string, target: Storage): Promise<string[]> {
  const sections = target.identity.sections;
  if (!sections) return [];
  const warn = () => {};
  const names: string[] = [];
  for (const agent of [null, ...agentFolders(root, warn)]) {
    const files = readScope(root, agent === null ? root : agentDir(root, agent), warn);
    // One write per section: writeSections stamps one time per call, and each file has its own.
    for (const [name, f] of files) {
      await sections.writeSections(agent, [[name, f.body]], Math.round(f.mtimeMs));
      names.push(agent === null ? name : `agents/${agent}/${name}`);
    }
  }
  return names;
}
