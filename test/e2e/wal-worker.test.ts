import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { BUN, childEnv, freePort, startProcess, tempHome, type Running } from "../helpers/process";

// `memsvc server` checkpoints its WAL on a worker thread (src/store/sqlite/checkpointer.ts):
// under a stream of ingests the server keeps answering /health, the worker does the
// checkpoints, and a clean stop leaves every memory in the database file.
// SQLite only (see test/postgres-skip.txt).

let server: Running | null = null;
afterAll(() => server?.proc.kill("SIGKILL"));

test("a server under ingest keeps /health up while its worker checkpoints; SIGTERM leaves every memory in the file", async () => {
  const home = tempHome();
  const port = await freePort();
  server = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], childEnv(home), port);
  const url = server.url;
  let done = false;
  const healths: number[] = [];
  const poll = (async () => {
    while (!done) {
      healths.push((await fetch(`${url}/health`)).status);
      await Bun.sleep(5);
    }
  })();
  // Three clients, long notes: enough WAL pages for the worker's threshold.
  const perClient = 60;
  const ingest = async (client: number) => {
    for (let i = 0; i < perClient; i++) {
      const content = `Client ${client} note ${i}: ${Array.from({ length: 60 }, (_, k) => `word${(i * 7 + k * 13 + client) % 997}`).join(" ")}`;
      const res = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content, project: `p${i % 4}` }),
      });
      expect(res.status).toBe(201);
    }
  };
  await Promise.all([ingest(1), ingest(2), ingest(3)]);
  done = true;
  await poll;
  expect(healths.length).toBeGreaterThan(0);
  expect(healths.every((s) => s === 200)).toBe(true);

  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  const stderr = server.stderr();
  server = null;
  expect(stderr).toContain("wal: a worker thread checkpoints the WAL");
  expect(stderr).toMatch(/wal: the checkpoint worker backfilled [1-9]\d* pages? in [1-9]\d* checkpoints?/);
  const db = new Database(join(home, "memsvc.db"), { readonly: true });
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n).toBe(3 * perClient);
  db.close();
}, 60_000);
