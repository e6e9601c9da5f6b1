import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, childEnv, freePort, ROOT, startProcess, tempHome, type Running } from "../helpers/process";
import { requestFrom } from "../helpers/server";
import { adminToken } from "../helpers/tokens";

let server: Running | null = null;
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

test("the server process never logs a token: not the real one, not a wrong one, not ?token= on pages or the API (debug logging on)", async () => {
  const home = tempHome();
  const port = await freePort();
  server = await startProcess(
    [BUN, join(ROOT, "src/main.ts"), "server", "--port", String(port), "--host", "0.0.0.0"],
    childEnv(home, { MEMSVC_LOG: "debug" }),
    port,
  );
  // The token that authenticates: config.json's on SQLite, an admin token of the database on PostgreSQL.
  const token = await adminToken(home);
  const wrong = "wrong-token-e2e-7d1c0b9a4f";
  const remote = (path: string, headers: Record<string, string> = {}, method = "GET", body?: string) =>
    requestFrom("127.0.0.2", `${server!.url}${path}`, { method, headers, body });
  const json = { "content-type": "application/json" };
  for (const auth of [`Bearer ${wrong}`, `Bearer ${token}x`, `Basic ${btoa(`user:${token}`)}`, token]) {
    expect((await remote("/recent", { authorization: auth })).status).toBe(401);
    expect((await remote("/ingest", { ...json, authorization: auth }, "POST", JSON.stringify({ content: "refused" }))).status).toBe(401);
    expect((await remote("/sse", { authorization: auth })).status).toBe(401);
    expect((await remote("/mcp", { ...json, authorization: auth }, "POST", "{}")).status).toBe(401);
  }
  for (const page of ["/viz", "/identity/ui", "/dashboard"]) expect((await remote(`${page}?token=${token}`)).status).toBe(200);
  for (const api of ["/recent", "/graph?op=hubs", "/identity"]) expect((await remote(`${api}${api.includes("?") ? "&" : "?"}token=${token}`)).status).toBe(401);
  // Errors are logged: make the app log some (a malformed body, an unknown route) with the token in the headers.
  expect((await remote("/ingest", { ...json, authorization: `Bearer ${token}` }, "POST", "{oops")).status).toBe(400);
  expect((await remote(`/no-such-route?token=${token}`, { authorization: `Bearer ${token}` })).status).toBe(404);
  expect((await remote("/recent", { authorization: `Bearer ${token}` })).status).toBe(200);
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  const log = server.stderr();
  expect(log).toContain("stopped cleanly");
  expect(log).not.toContain(token);
  expect(log).not.toContain(wrong);
});
