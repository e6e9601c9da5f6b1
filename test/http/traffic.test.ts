import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type TestServer } from "../helpers/server";

// Start-up work (calibration, warm-ups) waits for a lull in requests
// (core/slices.ts). Only requests that do work count: a monitor polling
// /health or a browser fetching static files every few ms held it back for
// its full deferral (30 s) before.
let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.stop());

test("pages, static files and /health are not traffic; API requests are", async () => {
  const traffic = srv.services.traffic;
  for (const path of ["/health", "/favicon.svg", "/dashboard", "/viz", "/memories", "/identity/ui"]) {
    const res = await fetch(srv.url + path);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
  }
  expect(traffic.idleMs).toBe(Number.POSITIVE_INFINITY);
  const res = await fetch(`${srv.url}/search?query=deploy`);
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  expect(traffic.idleMs).toBeLessThan(5_000);
});
