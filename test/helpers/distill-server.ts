import { afterAll, beforeAll, beforeEach } from "bun:test";
import { startFakeLlm, type FakeLlm } from "./fake-llm";
import { postJson, startServer, type TestServer } from "./server";

export const DISTILL_TIMEOUT_MS = 1500;

export const TRANSCRIPT =
  "user: The staging deploy failed because the migration locked the orders table for four minutes.\n\nassistant: I added lock_timeout = 5s to the migration runner and re-ran the deploy; it went through.";

export interface DistillHarness {
  fake: FakeLlm;
  srv: TestServer;
  post(body: unknown): Promise<Response>;
  sql<T>(q: string, ...args: any[]): T[];
  count(table: string): number;
}

/**
 * One real server wired to a fake model for a test file, emptied before
 * each test. Fields are filled in beforeAll, so read them inside tests.
 */
export function distillHarness(opts: { timeoutMs?: number } = {}): DistillHarness {
  const h = {
    post: (body: unknown) => postJson(`${h.srv.url}/distill`, body),
    sql: <T>(q: string, ...args: any[]) => h.srv.services.store.sqlite.query<T, any[]>(q).all(...args),
    count: (table: string) => h.sql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)[0].n,
  } as DistillHarness;
  beforeAll(async () => {
    h.fake = startFakeLlm();
    h.srv = await startServer({ config: { llm: { baseURL: h.fake.baseURL, model: "fake-distiller", timeoutMs: opts.timeoutMs ?? DISTILL_TIMEOUT_MS, contextChars: 8000 } } });
  });
  afterAll(async () => {
    await h.srv.stop();
    await h.fake.stop();
  });
  beforeEach(() => {
    h.fake.reset();
    h.srv.services.store.sqlite.run("DELETE FROM memories");
    h.srv.services.store.sqlite.run("DELETE FROM segments");
    for (let seq = 0; seq < 10_000; seq++) h.srv.services.index.remove(seq);
  });
  return h;
}
