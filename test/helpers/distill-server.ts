import { afterAll, beforeAll, beforeEach } from "bun:test";
import { startFakeLlm, type FakeLlm } from "./fake-llm";
import { existsSync, readFileSync } from "node:fs";
import type { Services } from "../../src/core/services";
import { dbRows, onSqlite, sqliteStoreOf } from "./engine";
import { postJson, startServer, type TestServer } from "./server";

export const DISTILL_TIMEOUT_MS = 1500;

export const TRANSCRIPT =
  "user: The staging deploy failed because the migration locked the orders table for four minutes.\n\nassistant: I added lock_timeout = 5s to the migration runner and re-ran the deploy; it went through.";

export interface DistillHarness {
  fake: FakeLlm;
  srv: TestServer;
  post(body: unknown): Promise<Response>;
  /** Rows of one SQL statement both engines speak (`?` placeholders), on the server's store. */
  sql<T>(q: string, ...args: any[]): Promise<T[]>;
  count(table: string): Promise<number>;
}

/**
 * One real server wired to a fake model for a test file, emptied before
 * each test. Fields are filled in beforeAll, so read them inside tests.
 */
export function distillHarness(opts: { timeoutMs?: number } = {}): DistillHarness {
  const h = {
    post: (body: unknown) => postJson(`${h.srv.url}/distill`, body),
    sql: <T>(q: string, ...args: any[]) => dbRows<T>(h.srv.services, q, args),
    count: async (table: string) => (await h.sql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0].n,
  } as DistillHarness;
  beforeAll(async () => {
    h.fake = startFakeLlm();
    h.srv = await startServer({
      config: { llm: { baseURL: h.fake.baseURL, model: "fake-distiller", timeoutMs: opts.timeoutMs ?? DISTILL_TIMEOUT_MS, contextChars: 8000 } },
    });
  });
  afterAll(async () => {
    await h.srv.stop();
    await h.fake.stop();
  });
  beforeEach(async () => {
    h.fake.reset();
    await dbRows(h.srv.services, "DELETE FROM memories");
    await dbRows(h.srv.services, "DELETE FROM segments");
    for (let seq = 0; seq < 10_000; seq++) h.srv.services.index.remove(seq);
  });
  return h;
}

/**
 * Everything the store holds, as text, to assert a secret is nowhere in it:
 * the SQLite file and its WAL byte for byte (free pages included), or on
 * PostgreSQL every row of every table of the store's schema.
 */
export async function storedText(s: Services): Promise<string> {
  if (onSqlite) {
    const file = sqliteStoreOf(s).file;
    return ["", "-wal"].map((x) => (existsSync(file + x) ? readFileSync(file + x).toString("latin1") : "")).join("");
  }
  const tables = await dbRows<{ t: string }>(s, "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ?", [s.config.database.schema]);
  const parts: string[] = [];
  for (const { t } of tables) parts.push(JSON.stringify(await dbRows(s, `SELECT * FROM ${t}`)));
  return parts.join("\n");
}
