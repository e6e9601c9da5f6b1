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
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

/** PGlite ignores the password; the URL carries one so tests see it never leaks. */
export const PGLITE_PASSWORD = "pglite-secret-9f3a";

export interface PgliteServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts a PGlite socket server in this process. */
export async function servePglite(opts: { vector?: boolean } = {}): Promise<PgliteServer> {
  const db = await PGlite.create(opts.vector === false ? {} : { extensions: { vector } });
  // Every pool of every store a test builds holds connections: the multiplexer serialises them anyway.
  const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 100_000 });
  await server.start();
  return {
    url: `postgres://postgres:${PGLITE_PASSWORD}@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
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
