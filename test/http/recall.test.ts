import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { postJson, requestFrom, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
const ids: Record<string, string> = {};

async function ingest(key: string, body: Record<string, unknown>): Promise<void> {
  const r = await postJson(`${srv.url}/ingest`, body);
  expect(r.status).toBe(201);
  ids[key] = (await r.json()).id;
}

beforeAll(async () => {
  srv = await startServer();
  await ingest("pg", { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra", session_date: "2026-03-01" });
  await ingest("deploy", {
    content: "Production deploys run through the GitHub Actions workflow deploy.yml with a manual approval.",
    project: "infra",
    session_date: "2026-03-02",
  });
  await ingest("vite", {
    content: "The React frontend is built with Vite and served by nginx.",
    project: "web",
    memory_type: "knowledge",
    session_date: "2026-03-02",
  });
  await ingest("lesson", {
    content: "Run database migrations with --lock-timeout=5s, or a long lock blocks the deploy.",
    project: "infra",
    memory_type: "learnings",
  });
  await ingest("lessonWeb", {
    content: "Clear the Vite cache after upgrading plugins; stale chunks broke the build twice.",
    project: "web",
    memory_type: "lesson",
  });
  await ingest("global", { content: "Prefer small pull requests: reviews of big ones were skipped and bugs slipped through.", memory_type: "learnings" });
});
afterAll(async () => {
  await srv.stop();
});

const recall = (body: unknown) => postJson(`${srv.url}/recall-index`, body);

describe("POST /recall-index", () => {
  test("index form", async () => {
    const r = await recall({ session_id: "h1", prompt: "which port does the staging postgres database listen on?", project: "infra", privacy: "WORK" });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({
      block: expect.stringMatching(/^## Memory recall \(auto\)\n- `[0-9a-f]{8}` experience, 2026-03-01: The staging Postgres/),
      shown: [ids.pg],
      turn: 1,
    });
  });

  test("nothing relevant, short prompt and reset forms", async () => {
    expect(await (await recall({ session_id: "h2", prompt: "suggest a recipe for a vegetarian lasagna with spinach" })).json()).toEqual({
      block: null,
      shown: [],
      turn: 1,
    });
    expect(await (await recall({ session_id: "h2", prompt: "ok thanks" })).json()).toEqual({ block: null, skipped: "short-prompt" });
    expect(await (await recall({ session_id: "h2", reset: true })).json()).toEqual({ ok: true, reset: true });
    expect(await (await recall({ session_id: "h2", prompt: "suggest a recipe for a vegetarian lasagna with spinach" })).json()).toEqual({
      block: null,
      shown: [],
      turn: 1,
    });
  });

  test("400 with a message for a missing or wrong session_id and other bad input", async () => {
    const cases: [unknown, RegExp][] = [
      [{ prompt: "which port does the staging postgres database listen on?" }, /session_id is required/],
      [{ session_id: 12, prompt: "which port does postgres use?" }, /session_id must be a string/],
      [{ session_id: "h3", prompt: ["a"] }, /prompt must be a string/],
      [{ session_id: "h3" }, /prompt is required/],
      [{ session_id: "h3", reset: "true" }, /reset must be true or false/],
      [["not", "an", "object"], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const r = await recall(body);
      expect(r.status).toBe(400);
      const err = (await r.json()).error;
      expect(err.code).toBe("invalid");
      expect(err.message).toMatch(message);
    }
    const malformed = await fetch(`${srv.url}/recall-index`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(malformed.status).toBe(400);
    const empty = await fetch(`${srv.url}/recall-index`, { method: "POST" });
    expect(empty.status).toBe(400);
  });

  test("remote callers need the token", async () => {
    const body = JSON.stringify({ session_id: "h4", reset: true });
    const headers = { "content-type": "application/json" };
    expect((await requestFrom("127.0.0.2", `${srv.url}/recall-index`, { method: "POST", headers, body })).status).toBe(401);
    const ok = await requestFrom("127.0.0.2", `${srv.url}/recall-index`, {
      method: "POST",
      headers: { ...headers, authorization: `Bearer ${srv.token}` },
      body,
    });
    expect(ok.status).toBe(200);
    expect((await requestFrom("127.0.0.2", `${srv.url}/learnings`)).status).toBe(401);
    expect((await requestFrom("127.0.0.2", `${srv.url}/index`)).status).toBe(401);
  });
});

describe("GET /learnings and /lessons", () => {
  test("the block, the learnings and the memory index; /lessons is the same handler", async () => {
    const r = await fetch(`${srv.url}/learnings`);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(Object.keys(body).sort()).toEqual(["block", "days", "index", "learnings", "project"]);
    expect(body.days).toBe(7);
    expect(body.project).toBeNull();
    expect(body.learnings.map((l: { id: string }) => l.id).sort()).toEqual([ids.lesson, ids.lessonWeb, ids.global].sort());
    expect(body.learnings[0]).toMatchObject({ memory_type: "learnings", tags: expect.any(Array), sources: [] });
    expect(body.block).toStartWith("## Learnings\n");
    expect(body.block).toContain(ids.lesson.slice(0, 8));
    expect(body.index).toMatchObject({ memories: 6, learnings: 3, by_type: { experience: 2, knowledge: 1, learnings: 3 } });
    expect(body.index.projects).toContainEqual({ project: "infra", memories: 3, learnings: 1 });
    expect(await (await fetch(`${srv.url}/lessons`)).json()).toEqual(body);
  });

  test("project keeps that project's and global learnings; days and bad parameters", async () => {
    const infra = await (await fetch(`${srv.url}/lessons?project=infra&days=30`)).json();
    expect(infra.learnings.map((l: { id: string }) => l.id).sort()).toEqual([ids.lesson, ids.global].sort());
    expect(infra).toMatchObject({ days: 30, project: "infra" });
    const none = await (await fetch(`${srv.url}/learnings?project=nothing-here`)).json();
    expect(none.learnings.map((l: { id: string }) => l.id)).toEqual([ids.global]);
    for (const days of ["0", "-3", "abc", "1.5"]) {
      const r = await fetch(`${srv.url}/learnings?days=${days}`);
      expect(r.status).toBe(400);
      expect((await r.json()).error.message).toContain("days");
    }
    expect((await (await fetch(`${srv.url}/learnings?days=100000`)).json()).days).toBe(365);
  });
});

describe("GET /index", () => {
  test("domains with memory and learnings counts, project groupings and keywords", async () => {
    const r = await fetch(`${srv.url}/index`);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.totals).toEqual({ memories: 6, learnings: 3, domains: 3, projects: 2 });
    const infra = body.domains.find((d: { domain: string }) => d.domain === "infra");
    expect(infra).toMatchObject({ domain: "infra", kind: "project", memories: 3, learnings: 1, primary: 3, projects: [{ project: "infra", memories: 3 }] });
    expect(infra.keywords).toEqual(expect.arrayContaining(["database", "deploy"]));
    expect(infra.keywords).not.toContain("infra");
    expect(body.domains.find((d: { domain: string }) => d.domain === "general")).toMatchObject({
      kind: "tag",
      memories: 1,
      learnings: 1,
      projects: [{ project: null, memories: 1 }],
    });
    expect(body.projects).toContainEqual({ project: "web", memories: 2, learnings: 1, domains: [] });
  });
});
