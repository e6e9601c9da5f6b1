import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeTinyModel } from "../helpers/tiny-model";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

// A first start with no model on disk and the model hub unreachable (or slow): the server must
// answer at once with the offline embedder and switch to the model when it arrives.
const MAIN = "src/main.ts";
const MODEL = "test/tiny-bge";
let root: string;
let modelSource: string;
let server: Running | null = null;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memsvc-download-"));
  modelSource = await makeTinyModel(join(root, "hub"), MODEL);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

const health = async (url: string) => (await fetch(`${url}/health`)).json() as Promise<any>;
const ingest = (url: string, content: string) =>
  fetch(`${url}/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ content, type: "fact" }) });

/** Online (MEMSVC_OFFLINE off), with the hub at `hubUrl` and the tiny test model as the configured model. */
function onlineHome(hubUrl: string): { home: string; env: Record<string, string> } {
  const home = tempHome();
  writeFileSync(join(home, "config.json"), JSON.stringify({ embedder: { model: MODEL } }));
  return { home, env: childEnv(home, { MEMSVC_OFFLINE: "0", HF_ENDPOINT: hubUrl }) };
}

describe("start-up never waits on a model download", () => {
  test("a hub that accepts and never answers: /health answers while the download is pending, with the fallback serving", async () => {
    const sockets: Socket[] = [];
    const hang: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => hang.listen(0, "127.0.0.1", resolve));
    try {
      const { env } = onlineHome(`http://127.0.0.1:${(hang.address() as { port: number }).port}/`);
      const port = await freePort();
      const started = Date.now();
      // startProcess gives up after 20 s; the old start-up waited for the hub's 30 s timeout.
      server = await startProcess([BUN, MAIN, "server", "--port", String(port)], env, port);
      expect(Date.now() - started).toBeLessThan(30_000);
      // The model request reached the hub and is still unanswered, yet the server serves.
      await until("the model request to reach the hub", async () => sockets.length > 0);
      const h = await health(server.url);
      expect(h.embedder.kind).toBe("fallback");
      expect(h.embedder.loading).toMatchObject({ model: MODEL, state: "downloading" });
      expect(sockets.every((s) => !s.destroyed)).toBe(true);

      expect((await ingest(server.url, "the staging database is restored every sunday night")).status).toBe(201);
      const found = await (await fetch(`${server.url}/search?query=${encodeURIComponent("staging database restored")}`)).json();
      expect(JSON.stringify(found)).toContain("every sunday night");

      const status = await run([BUN, MAIN, "status"], { ...env, MEMSVC_URL: server.url });
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/embedder:\s+offline fallback.*\(downloading test\/tiny-bge since .*switches to it when ready\)/);
    } finally {
      for (const s of sockets) s.destroy();
      hang.close();
    }
  });

  test("a slow hub: the fallback serves until the model arrives, then the server switches and re-embeds; the next start uses the model at once", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const requested: string[] = [];
    const hub = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      async fetch(req) {
        const path = new URL(req.url).pathname;
        requested.push(path);
        await gate;
        const match = path.match(/^\/(.+?)\/resolve\/main\/(.+)$/);
        const file = match ? Bun.file(join(modelSource, match[1]!, match[2]!)) : null;
        return file && (await file.exists()) ? new Response(file) : new Response("not found", { status: 404 });
      },
    });
    try {
      const { env } = onlineHome(hub.url.href);
      const port = await freePort();
      server = await startProcess([BUN, MAIN, "server", "--port", String(port)], env, port);
      const before = await health(server.url);
      expect(before.embedder.kind).toBe("fallback");
      expect(before.embedder.loading?.state).toBe("downloading");
      for (const text of [
        "deploys go through the staging host first",
        "the billing service retries webhooks three times",
        "release notes live in docs/releases",
      ]) {
        expect((await ingest(server.url, text)).status).toBe(201);
      }
      await until("the model request to reach the hub", async () => requested.length > 0);

      release();
      const after = await until("the switch to the model", async () => {
        const h = await health(server!.url);
        return h.embedder.kind === "onnx" && !h.embedder.reembedding && h.embedder.loading === null ? h : null;
      });
      expect(after.embedder.id).toBe(`onnx:${MODEL}:q8`);
      // The log line follows the cursor's commit: on PostgreSQL /health can see the cursor cleared a moment before the line reaches stderr.
      await until("the re-embed's closing line", async () => server!.stderr().includes("re-embedding finished: 3 memories"));
      const r = await (await fetch(`${server.url}/search?query=${encodeURIComponent("the billing service retries webhooks three times")}`)).json();
      expect(r.results[0].content).toBe("the billing service retries webhooks three times");
      expect(r.results[0].matched_by).toContain("vector");

      server.proc.kill("SIGTERM");
      await server.proc.exited;
      requested.length = 0;
      server = await startProcess([BUN, MAIN, "server", "--port", String(port)], env, port);
      const again = await health(server.url);
      expect(again.embedder.id).toBe(`onnx:${MODEL}:q8`);
      expect(again.embedder.loading).toBeNull();
      expect(again.embedder.reembedding).toBe(false);
      expect(requested).toEqual([]);
    } finally {
      hub.stop(true);
    }
  });
});
