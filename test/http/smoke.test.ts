import { afterAll, beforeAll, expect, test } from "bun:test";
import { postJson, requestFrom, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.stop();
});

test("ingest then search over a real socket", async () => {
  const r = await postJson(`${srv.url}/ingest`, { content: "The staging database lives on port 5433", project: "infra" });
  expect(r.status).toBe(201);
  const s = await (await fetch(`${srv.url}/search?query=staging%20database%20port`)).json();
  expect(s.results[0].content).toContain("5433");
});

test("a peer on 127.0.0.2 needs the token", async () => {
  const no = await requestFrom("127.0.0.2", `${srv.url}/recent`);
  expect(no.status).toBe(401);
  const yes = await requestFrom("127.0.0.2", `${srv.url}/recent`, { headers: { authorization: `Bearer ${srv.token}` } });
  expect(yes.status).toBe(200);
});
