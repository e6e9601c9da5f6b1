import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { TObject } from "@sinclair/typebox";
import { LearningsInput } from "../../src/core/nightly/schema";
import { DeleteInput, HistoryInput, IngestInput, MemoryGetInput, UpdateInput } from "../../src/core/memories/schema";
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
    const app = createApp({
      config: {
        llm: { provider: "openai" },
        paths: { state: "/nonexistent" },
        token: "x",
        auth: { localhostBypass: false, localhostBypassFrom: "default", rateLimitPerMinute: 0 },
      },
      storage: { engine: "sqlite" },
      traffic: { note() {} },
      log() {},
    } as never);
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

  test("every route that takes input documents it: the rest of issue 35's routes", () => {
    const params = (method: string, path: string) => (doc.paths[path][method].parameters ?? []).map((p: any) => p.name).sort();
    const body = (method: string, path: string) => doc.paths[path][method].requestBody.content["application/json"].schema;
    expect(params("get", "/graph")).toEqual(["domain", "id", "limit", "minStrength", "op", "relationship", "tag", "target_id", "type"]);
    expect(params("get", "/dashboard/data")).toEqual(["days"]);
    expect(params("get", "/anchors")).toEqual(["repo"]);
    expect(params("get", "/memory/history")).toEqual(["id"]);
    expect(params("delete", "/memory")).toEqual(["id"]);
    expect(params("get", "/identity")).toEqual(["agent"]);
    expect(params("get", "/memories/list")).toContain("cursor");
    expect(params("get", "/memories/detail")).toEqual(["id"]);
    expect(body("post", "/distill").properties.messages).toBeDefined();
    expect(body("put", "/identity").required).toEqual(["sections"]);
    expect(body("patch", "/memory").required).toEqual(["id"]);
    expect(body("post", "/memory/restore").required).toEqual(["id", "version"]);
    expect(body("post", "/memory/stale").properties.marks.items.properties.reason).toBeDefined();
    expect(body("post", "/memories/delete").required).toEqual(["confirm_count"]);
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

  test("memsvc_update, memsvc_delete and memsvc_history are PATCH /memory, DELETE /memory and GET /memory/history", () => {
    expect(tools.get("memsvc_update")).toEqual(json(UpdateInput));
    expect(Object.keys(doc.paths["/memory"].patch.requestBody.content["application/json"].schema.properties)).toEqual(Object.keys(UpdateInput.properties));
    expect(tools.get("memsvc_delete").properties.id).toEqual(json(DeleteInput.properties.id));
    expect(doc.paths["/memory"].delete.parameters[0].schema).toMatchObject({ type: "string", description: DeleteInput.properties.id.description });
    expect(tools.get("memsvc_history").properties.id).toEqual(json(HistoryInput.properties.id));
  });

  test("memsvc_get's id and memsvc_ingest's fields are GET /memory's and POST /ingest's", () => {
    expect(tools.get("memsvc_get").properties.id).toEqual(json(MemoryGetInput.properties.id));
    const ingest = tools.get("memsvc_ingest");
    expect(ingest.required).toEqual(["content"]);
    expect(ingest.properties.content).toEqual(json(IngestInput.properties.content));
    expect(ingest.properties.project).toEqual(json(IngestInput.properties.project.anyOf[0]));
  });
});
