// Serves one PGlite database (real PostgreSQL in WebAssembly, with pgvector)
// over the PostgreSQL wire protocol on 127.0.0.1, on a port the kernel picks:
//   bun test/helpers/pglite-server.ts [--no-vector] [--parent <pid>] [--load <tar>] [--dump-to <tar>]
// prints one line {"url": "postgres://..."} on stdout and serves until killed
// (or, with --parent, until that process is gone: a test process that dies,
// even by SIGKILL, takes its database with it). Tests and benches point memsvc at the URL
// exactly as production points it at a managed database.
// --no-vector: a database without the pgvector extension (its error path).
// --load <tar>: start from a data directory dumped earlier (bench/lib/pg-cache.ts:
//   a seeded 100k schema instead of 30 minutes of seeding); still in memory.
// --dump-to <tar>: on SIGUSR2, CHECKPOINT and write the data directory there
//   (through <tar>.tmp, renamed when complete; <tar>.err holds a failure).
import { renameSync, writeFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PgliteFront } from "./pglite-front";
import { TEST_DB_PASSWORD } from "./pg-server";

/** PGlite ignores the password; the URL carries one so tests see it never leaks. */
export const PGLITE_PASSWORD = TEST_DB_PASSWORD;

export interface PgliteServer {
  url: string;
  /** Writes the data directory as an uncompressed tar (what `--load` reads) to `file`. */
  dump(file: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a PGlite socket server in this process (from a dumped data directory with `load`). */
export async function servePglite(opts: { vector?: boolean; load?: string } = {}): Promise<PgliteServer> {
  const loadDataDir = opts.load ? Bun.file(opts.load) : undefined;
  const db = await PGlite.create({ ...(opts.vector === false ? {} : { extensions: { vector } }), ...(loadDataDir ? { loadDataDir } : {}) });
  // Our own front, not @electric-sql/pglite-socket's server: see pglite-front.ts for why.
  const front = new PgliteFront(db);
  const port = await front.listen("127.0.0.1");
  return {
    url: `postgres://postgres:${PGLITE_PASSWORD}@127.0.0.1:${port}/postgres`,
    async dump(file: string) {
      // The dump copies files: flush shared buffers first so a load needs no WAL replay.
      await db.exec("CHECKPOINT");
      const tar = await db.dumpDataDir("none");
      await Bun.write(`${file}.tmp`, tar);
      renameSync(`${file}.tmp`, file);
    },
    async stop() {
      await front.close();
      await db.close();
    },
  };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const server = await servePglite({ vector: !args.includes("--no-vector"), load: flag("--load") });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () => void server.stop().finally(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  const dumpTo = flag("--dump-to");
  if (dumpTo) {
    process.on("SIGUSR2", () => {
      server.dump(dumpTo).catch((e: unknown) => writeFileSync(`${dumpTo}.err`, String((e as Error)?.stack ?? e)));
    });
  }
  const parent = flag("--parent") ? Number(flag("--parent")) : null;
  if (parent) {
    setInterval(() => {
      try {
        process.kill(parent, 0);
      } catch {
        stop();
      }
    }, 1000);
  }
}
