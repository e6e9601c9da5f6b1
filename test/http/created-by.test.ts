import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createToken } from "../../src/core/tokens";
import { TRANSCRIPT } from "../helpers/distill-server";
import { dbRows } from "../helpers/engine";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { drive } from "../helpers/mcp";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

/**
 * Memories record which member created them (issue 36), whichever way they
 * were written: POST /ingest, POST /distill (the usual path: hooks and
 * capture), memsvc_ingest over MCP. A member is a database token; the
 * localhost bypass and a home's config token are the home's owner, not a
 * member, and record none.
 */

let fake: FakeLlm;
let server: TestServer;
let writer = "";

const creators = async (ids: string[]) =>
  (
    await dbRows<{ id: string; created_by: string | null }>(
      server.services,
      `SELECT id, created_by FROM memories WHERE id IN (${ids.map(() => "?").join(", ")})`,
      ids,
    )
  )
    .map((r) => r.created_by)
    .sort();

beforeAll(async () => {
  fake = startFakeLlm();
  server = await startServer({ config: { llm: { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: 10_000, contextChars: 8000 } } });
  writer = (await createToken(server.services.storage.tokens, { name: "dana", role: "writer" }, Date.now())).token;
});

afterAll(async () => {
  await server?.stop();
  await fake?.stop();
});

const post = (peer: string, token: string | null, path: string, body: unknown) =>
  requestFrom(peer, `${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

describe("created_by", () => {
  test("POST /distill with a member token records the member on every memory it stores", async () => {
    fake.fallback = () => memoriesReply("The orders migration needs lock_timeout = 5s on staging.", "The export job locks the orders table nightly.");
    const r = await post("127.0.0.2", writer, "/distill", { text: TRANSCRIPT, session_id: "created-by-1", project: "shop" });
    expect(r.status).toBe(201);
    const ids = r.json().ids as string[];
    expect(ids.length).toBe(2);
    expect(await creators(ids)).toEqual(["dana", "dana"]);
  });

  test("POST /ingest and memsvc_ingest with a member token record it; the localhost bypass records none", async () => {
    const viaRest = await post("127.0.0.2", writer, "/ingest", { content: "The billing service retries webhooks three times.", project: "shop" });
    expect(viaRest.status).toBe(201);
    const bypass = await post("127.0.0.1", null, "/ingest", { content: "Staging runs on a single node pool.", project: "shop" });
    expect(bypass.status).toBe(201);
    const [results] = await drive(server.url, "http", {
      token: writer,
      steps: [{ call: "memsvc_ingest", args: { content: "Deploys freeze on Fridays after noon.", project: "shop" }, label: "ingest" }],
    });
    expect(results[0].isError ?? false).toBe(false);
    const mcpId = /id: ([0-9a-f-]{36})/.exec(results[0].text ?? "")![1];
    expect(await creators([viaRest.json().id, mcpId])).toEqual(["dana", "dana"]);
    expect(await creators([bypass.json().id])).toEqual([null]);
  });
});
