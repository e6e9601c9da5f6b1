import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { onPostgres, testDatabaseUrl } from "../helpers/engine";
import { BUN, childEnv, freePort, startProcess, tempHome, type Running } from "../helpers/process";
import { createDatabaseToken, useTokenInConfig } from "../helpers/tokens";

// Two real `memsvc server` processes, each with its own home and token, over
// one PostgreSQL database (the suite's database, over TCP): a
// memory written through one is answered by GET /memory on the other at once,
// and recall-index suppression of a session is shared between them.
// PostgreSQL only: on SQLite the servers of one store are one machine's.
describe.skipIf(!onPostgres)("two memsvc servers over one PostgreSQL database (PostgreSQL only)", () => {
  const servers: { run: Running; token: string }[] = [];
  beforeAll(async () => {
    const schema = `multi_${process.pid}`;
    for (let i = 0; i < 2; i++) {
      const home = tempHome();
      const port = await freePort();
      const env = childEnv(home, { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: testDatabaseUrl(), MEMSVC_DATABASE_SCHEMA: schema });
      const run = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], env, port, undefined, 60_000);
      // Each server's member has a token of their own in the shared database (config tokens authenticate nothing on PostgreSQL).
      const token = await createDatabaseToken(home, {
        name: `member-${i}`,
        role: "writer",
        env: { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: testDatabaseUrl(), MEMSVC_DATABASE_SCHEMA: schema },
      });
      useTokenInConfig(home, token);
      servers.push({ run, token });
    }
  }, 180_000);
  afterAll(() => {
    for (const s of servers) s.run.proc.kill();
  });

  const call = async (i: number, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${servers[i].run.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${servers[i].token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  test("POST /ingest on one, GET /memory on the other; PATCH on the other, GET on the first; DELETE, then 404 on both", async () => {
    const made = await call(0, "POST", "/ingest", { content: "The payments API rate-limits at 50 requests per second per key.", project: "payments" });
    expect(made.status).toBe(201);
    const id: string = made.body.id;
    const got = await call(1, "GET", `/memory?id=${id.slice(0, 8)}`);
    expect(got.status).toBe(200);
    expect(got.body.memory).toMatchObject({
      id,
      content: "The payments API rate-limits at 50 requests per second per key.",
      project: "payments",
      used_count: 1,
    });
    const patched = await call(1, "PATCH", "/memory", { id, content: "The payments API rate-limits at 80 requests per second per key." });
    expect(patched.status).toBe(200);
    const again = await call(0, "GET", `/memory?id=${id}`);
    expect(again.body.memory).toMatchObject({ content: "The payments API rate-limits at 80 requests per second per key.", used_count: 2 });
    expect((await call(0, "GET", `/memory/history?id=${id}`)).body.versions.map((v: any) => v.content)).toEqual([
      "The payments API rate-limits at 50 requests per second per key.",
    ]);
    expect((await call(0, "DELETE", `/memory?id=${id}`)).status).toBe(200);
    expect((await call(1, "GET", `/memory?id=${id}`)).status).toBe(404);
    expect((await call(0, "GET", `/memory?id=${id}`)).status).toBe(404);
  }, 60_000);

  test("recall-index suppression is shared: what server A showed a session, server B does not show again; a reset through B shows it through A", async () => {
    const prompt = "which port does the staging postgres database listen on?";
    const made = await call(0, "POST", "/ingest", {
      content: "The staging Postgres database listens on port 5433 behind pgbouncer; connect with psql -p 5433.",
      project: "infra",
    });
    expect(made.status).toBe(201);
    const id: string = made.body.id;
    const session = `multi-${process.pid}`;
    const first = await call(0, "POST", "/recall-index", { session_id: session, prompt, project: "infra" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ shown: [id], turn: 1 });
    expect((await call(1, "POST", "/recall-index", { session_id: session, prompt, project: "infra" })).body).toEqual({ block: null, shown: [], turn: 2 });
    // Another session on B still gets it: suppression is per session, not global.
    expect((await call(1, "POST", "/recall-index", { session_id: `${session}-other`, prompt, project: "infra" })).body).toMatchObject({ shown: [id], turn: 1 });
    expect((await call(1, "POST", "/recall-index", { session_id: session, reset: true })).body).toEqual({ ok: true, reset: true });
    expect((await call(0, "POST", "/recall-index", { session_id: session, prompt, project: "infra" })).body).toMatchObject({ shown: [id], turn: 1 });
  }, 60_000);
});
