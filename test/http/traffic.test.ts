import { afterAll, beforeAll, expect, test } from "bun:test";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

// Start-up work (calibration, warm-ups) waits for a lull in requests
// (core/slices.ts). Only requests let in to do work count: a monitor polling
// /health or a browser fetching static files every few ms held it back for
// its full deferral (30 s) before, and so could a client the auth refuses.
let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.stop());

const forget = () => ((srv.services.traffic as unknown as { last: number }).last = Number.NEGATIVE_INFINITY);
const idle = () => srv.services.traffic.idleMs;

test("pages, static files and /health are not traffic", async () => {
  forget();
  for (const [method, path] of [
    ["GET", "/health"],
    ["HEAD", "/health"],
    ["GET", "/favicon.svg"],
    ["GET", "/dashboard"],
    ["GET", "/viz"],
    ["GET", "/memories"],
    ["GET", "/identity/ui"],
    ["GET", "/assets/none.js"],
  ]) {
    const res = await fetch(srv.url + path, { method });
    await res.arrayBuffer();
    expect([200, 404]).toContain(res.status);
  }
  expect(idle()).toBe(Number.POSITIVE_INFINITY);
});

test("API requests are traffic, next to public paths too", async () => {
  for (const path of ["/search?query=deploy", "/dashboard/data", "/recent"]) {
    forget();
    const res = await fetch(srv.url + path);
    await res.arrayBuffer();
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    expect(idle()).toBeLessThan(5_000);
  }
  forget();
  const res = await fetch(`${srv.url}/search?query=deploy`, { headers: { authorization: `Bearer ${srv.token}` } });
  await res.arrayBuffer();
  expect(idle()).toBeLessThan(5_000);
});

test("requests the auth refuses are not traffic", async () => {
  forget();
  const remote = await requestFrom("127.0.0.2", `${srv.url}/search?query=deploy`);
  expect(remote.status).toBe(401);
  const wrong = await fetch(`${srv.url}/search?query=deploy`, { headers: { authorization: "Bearer wrong" } });
  await wrong.arrayBuffer();
  expect(wrong.status).toBe(401);
  expect(idle()).toBe(Number.POSITIVE_INFINITY);
});
