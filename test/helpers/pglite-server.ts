// Serves one PGlite database (real PostgreSQL in WebAssembly, with pgvector)
// over the PostgreSQL wire protocol on 127.0.0.1, on a port the kernel picks:
//   bun test/helpers/pglite-server.ts [--no-vector] [--parent <pid>]
// prints one line {"url": "postgres://..."} on stdout and serves until killed
// (or, with --parent, until that process is gone: a test process that dies,
// even by SIGKILL, takes its database with it). Tests and benches point memsvc at the URL
// exactly as production points it at a managed database.
// --no-vector: a database without the pgvector extension (its error path).
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PgliteFront } from "./pglite-front";

/** PGlite ignores the password; the URL carries one so tests see it never leaks. */
export const PGLITE_PASSWORD = "pglite-secret-9f3a";

export interface PgliteServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts a PGlite socket server in this process. */
export async function servePglite(opts: { vector?: boolean } = {}): Promise<PgliteServer> {
  const db = await PGlite.create(opts.vector === false ? {} : { extensions: { vector } });
  // Our own front, not @electric-sql/pglite-socket's server: see pglite-front.ts for why.
  const front = new PgliteFront(db);
  const port = await front.listen("127.0.0.1");
  return {
    url: `postgres://postgres:${PGLITE_PASSWORD}@127.0.0.1:${port}/postgres`,
    async stop() {
      await front.close();
      await db.close();
    },
  };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const server = await servePglite({ vector: !args.includes("--no-vector") });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () => void server.stop().finally(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  const parent = args.includes("--parent") ? Number(args[args.indexOf("--parent") + 1]) : null;
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
