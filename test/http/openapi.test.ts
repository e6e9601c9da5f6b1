import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { TObject } from "@sinclair/typebox";
import { LearningsInput } from "../../src/core/nightly/schema";
import { IngestInput, MemoryGetInput } from "../../src/core/memories/schema";
import { RecentInput, SearchInput } from "../../src/core/search/schema";
import { createApp } from "../../src/http/app";
import { registerTools } from "../../src/mcp/tools";
import { requestFrom, startServer, type TestServer } from "../helpers/server";
import { TEST_TOKEN } from "../helpers/services";

let srv: TestServer;
let doc: any;
beforeAll(async () => {
  srv = await startServer();
  doc = await (await fetch(`${srv.url}/openapi.json`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })).json();
});
afterAll(async () => {
  await srv.stop();
});

const json = (v: unknown) => JSON.parse(JSON.stringify(v));

describe("GET /openapi.json", () => {
  test("needs the token from a remote peer, like every data route; loopback is let in", async () => {
    const remote = await requestFrom("127.0.0.2", `${srv.url}/openapi.json`);
    expect(remote.status).toBe(401);
    const local = await requestFrom("127.0.0.1", `${srv.url}/openapi.json`);
    expect(local.status).toBe(200);
    expect(JSON.parse(local.body).openapi).toMatch(/^3\./);
  });

  test("names every route of the app with its method (static files and the document itself aside)", () => {
    const app = createApp({ config: { llm: { provider: "openai" }, paths: { state: "/nonexistent" }, token: "x" }, traffic: { note() {} }, log() {} } as never);
    const routes = app.routes.filter((r) => !r.path.includes(".") && r.path !== "/openapi" && r.method !== "OPTIONS");
    expect(routes.length).toBeGreaterThan(40);
    for (const r of routes) {
      const path = r.path.replace(/:([^/]+)/g, "{$1}");
      expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${path}`).toBeDefined();
    }
  });

  test("the operations' parameters and bodies, from their schemas", () => {
    const params = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.map((p: any) => [p.name, p]));
    const search = params("/search");
    expect(Object.keys(search).sort()).toEqual(Object.keys(SearchInput.properties).sort());
    expect(search.query.required).toBe(true);
    expect(search.limit).toMatchObject({ required: false, schema: { type: "integer", minimum: 1 } });
    expect(search.min_score.schema).toMatchObject({ type: "number", minimum: 0, maximum: 1 });
    expect(Object.keys(params("/recent")).sort()).toEqual(["limit", "project"]);
    expect(Object.keys(params("/learnings")).sort()).toEqual(["days", "project"]);
    expect(params("/memory").id.required).toBe(true);
    const ingest = doc.paths["/ingest"].post.requestBody.content["application/json"].schema;
    expect(ingest.required).toEqual(["content"]);
    expect(Object.keys(ingest.properties).sort()).toEqual(Object.keys(IngestInput.properties).sort());
    const recall = doc.paths["/recall-index"].post.requestBody.content["application/json"].schema;
    expect(recall.required).toEqual(["session_id"]);
    expect(recall.properties.reset).toBeDefined();
  });
});

describe("MCP tool input schemas are the REST operations' schemas", () => {
  let tools: Map<string, any>;
  beforeAll(async () => {
    const server = new Server({ name: "t", version: "0" }, { capabilities: { tools: {} } });
    registerTools(server, {} as never);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "0" });
    await Promise.all([server.connect(a), client.connect(b)]);
    tools = new Map((await client.listTools()).tools.map((t) => [t.name, t.inputSchema]));
    await client.close();
  });

  const pairs: [string, TObject, string, string][] = [
    ["memsvc_search", SearchInput, "get", "/search"],
    ["memsvc_recent", RecentInput, "get", "/recent"],
    ["memsvc_learnings", LearningsInput, "get", "/learnings"],
  ];
  for (const [tool, schema, method, path] of pairs) {
    test(`${tool} = ${method.toUpperCase()} ${path}`, () => {
      expect(tools.get(tool)).toEqual(json(schema));
      const rest = doc.paths[path][method].parameters;
      expect(rest.map((p: any) => p.name).sort()).toEqual(Object.keys(tools.get(tool).properties).sort());
      for (const p of rest) {
        const t = tools.get(tool).properties[p.name];
        expect(p.required, p.name).toBe((tools.get(tool).required ?? []).includes(p.name));
        expect(p.schema.type, p.name).toBe(t.type);
        expect(p.schema.minimum, p.name).toBe(t.minimum);
      }
    });
  }

  test("memsvc_get's id and memsvc_ingest's fields are GET /memory's and POST /ingest's", () => {
    expect(tools.get("memsvc_get").properties.id).toEqual(json(MemoryGetInput.properties.id));
    const ingest = tools.get("memsvc_ingest");
    expect(ingest.required).toEqual(["content"]);
    expect(ingest.properties.content).toEqual(json(IngestInput.properties.content));
    expect(ingest.properties.project).toEqual(json(IngestInput.properties.project.anyOf[0]));
  });
});
