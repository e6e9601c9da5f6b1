import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestMemory } from "../../src/core/ingest";
import { MAX_BODY_BYTES } from "../../src/http/app";
import { startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { rawGet, rawHttp, rng, TRAVERSAL } from "../helpers/fuzz";
import { bodyEndpoints, envelopeCases, fieldCases, queryCases, queryEndpoints, structuredCases } from "../helpers/fuzz-cases";
import { Fuzzer } from "../helpers/fuzz-run";
import { startServer, type TestServer } from "../helpers/server";

/** Change it to explore other cases; a failure names its case, and the same seed replays it. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const r = rng(SEED);
/** Each case snapshots the store before and after (on PostgreSQL, many queries): a test of a few hundred cases passes bun's 5 s default on a loaded machine. */
const FUZZ_TIMEOUT_MS = 60_000;

let srv: TestServer;
let llm: FakeLlm;
let fuzz: Fuzzer;
const ids: string[] = [];

beforeAll(async () => {
  llm = startFakeLlm();
  let n = 0;
  llm.fallback = () => ({
    json: {
      memories: [
        {
          content: `Fuzz distill result ${n++}: the harbour crane firmware is pinned after the tide-table outage.`,
          memory_type: "decisions",
          tags: ["cranes"],
        },
      ],
    },
  });
  // A small context makes every multi-megabyte transcript exceed the chunk limit before any model call.
  srv = await startServer({ config: { llm: { baseURL: llm.baseURL, model: "fake", apiKey: "k", contextChars: 4000 } } });
  for (let i = 0; i < 6; i++) {
    const res = await ingestMemory(srv.services, {
      content: `Seed memory ${i}: harbour crane ${i} needs tide table ${i * 7} checked before lifting.`,
      project: i % 2 ? "fuzz" : "other",
    });
    ids.push(res.id!);
  }
  mkdirSync(srv.services.config.paths.identity, { recursive: true });
  writeFileSync(join(srv.services.config.paths.identity, "soul.md"), "I am the fuzz agent.\n");
  fuzz = new Fuzzer(srv);
});

afterAll(async () => {
  const total = fuzz.save(`fuzz-http-${SEED}`);
  console.log(`fuzz (seed ${SEED}): ${total.requests} requests over ${total.endpoints} endpoints; counts in test-artifacts/fuzz-http-${SEED}.json`);
  await srv.stop();
  await llm.stop();
});

async function finish(): Promise<void> {
  const problems = fuzz.problems.splice(0);
  expect(await fuzz.healthy()).toBe(true);
  expect(problems).toEqual([]);
}

describe("JSON bodies", () => {
  for (const e of bodyEndpoints(() => r.pick(ids))) {
    test(
      `${e.name}: malformed JSON, content types, wrong types, missing/extra fields, huge and invalid strings`,
      async () => {
        for (const c of envelopeCases(e, e.valid(r))) await fuzz.send(c);
        for (const c of fieldCases(e, r)) await fuzz.send(c);
        await finish();
      },
      FUZZ_TIMEOUT_MS,
    );
  }

  test(
    "structured fields: /distill messages, PUT /identity and /context sections and agents, DELETE /memory bodies",
    async () => {
      for (const e of [
        { name: "PUT /identity", method: "PUT", path: "/identity" },
        { name: "PUT /context", method: "PUT", path: "/context" },
      ])
        for (const c of envelopeCases(e, { sections: { fuzzsec: "x" } })) await fuzz.send(c);
      for (const c of structuredCases(r)) await fuzz.send(c);
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe("query parameters", () => {
  test(
    "every GET (and DELETE /memory): wrong types, encoded bytes, FTS operators, traversal, repeats, unknown parameters",
    async () => {
      for (const e of queryEndpoints(() => r.pick(ids))) for (const c of queryCases(e, r)) await fuzz.send(c);
      for (const p of ["project", "limit", "privacy"])
        await fuzz.send({ endpoint: "GET /identity", label: `recent-style ${p}`, method: "GET", path: `/identity?${p}=1`, expect: "reject" });
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    "raw bytes in the request line and oversized URLs: refused by Bun's HTTP parser (bare 4xx/505) or answered by the app, never a crash",
    async () => {
      const enc = new TextEncoder();
      const tails = [[0xff], [0xc0, 0xaf], [0x00], [0x7f], [0x1b], [0x0b], [0x20, 0x20], [0x0d]];
      for (const path of ["/search?query=", "/memory?id=", "/viz/vendor/", "/assets/", "/identity?agent="]) {
        for (const t of tails) {
          const label = `raw bytes ${t} after ${path}`;
          const strict = !path.startsWith("/search");
          try {
            const res = await rawGet(srv.port, new Uint8Array([...enc.encode(path), ...t]));
            await fuzz.judgeRaw({ endpoint: "raw request line", label, expect: strict ? "reject" : "any" }, res, { transport: true });
          } catch {
            // The parser may drop the connection without answering: allowed, as long as the server lives.
            fuzz.record("raw request line", "closed");
          }
        }
      }
      for (const kb of [64, 1024]) {
        const res = await rawGet(srv.port, `/search?query=${"q".repeat(kb * 1024)}`).catch(() => null);
        if (res) await fuzz.judgeRaw({ endpoint: "raw request line", label: `URL of ${kb} KB`, expect: "reject" }, res, { transport: true });
        else fuzz.record("raw request line", "closed");
      }
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe("hostile headers", () => {
  test(
    "odd Host, Content-Length, Transfer-Encoding, Content-Type and Authorization headers: a 4xx or an answer, never a 5xx",
    async () => {
      const body = JSON.stringify({ content: "Header fuzz: the crane log rotates daily." });
      const headerSets: [string, string][] = [
        ["empty Host", "host: \r\n"],
        ["long Host", `host: ${"a".repeat(300)}\r\n`],
        ["Host port out of range", "host: localhost:99999\r\n"],
        ["Host negative port", "host: localhost:-1\r\n"],
        ["Host with userinfo", "host: 127.0.0.1:80@evil.com\r\n"],
        ["Host with a tab", "host: localhost\tevil\r\n"],
        ["two Hosts", "host: 127.0.0.1\r\nhost: evil.com\r\n"],
        ["Content-Length negative", "host: 127.0.0.1\r\ncontent-length: -1\r\n"],
        ["Content-Length text", "host: 127.0.0.1\r\ncontent-length: abc\r\n"],
        ["Content-Length huge number", "host: 127.0.0.1\r\ncontent-length: 99999999999999999999\r\n"],
        ["Content-Length twice, differing", `host: 127.0.0.1\r\ncontent-length: ${body.length}\r\ncontent-length: 3\r\n`],
        ["Content-Length shorter than the body", "host: 127.0.0.1\r\ncontent-length: 5\r\n"],
        ["chunked and Content-Length", `host: 127.0.0.1\r\ntransfer-encoding: chunked\r\ncontent-length: ${body.length}\r\n`],
        ["Transfer-Encoding gzip", "host: 127.0.0.1\r\ntransfer-encoding: gzip\r\n"],
        ["Content-Type UTF-16 (UTF-8 body)", `host: 127.0.0.1\r\ncontent-type: application/json; charset=utf-16\r\ncontent-length: ${body.length}\r\n`],
        ["Content-Type with NUL", `host: 127.0.0.1\r\ncontent-type: application/json\u0000x\r\ncontent-length: ${body.length}\r\n`],
        ["Authorization 12 KB", `host: 127.0.0.1\r\nauthorization: Bearer ${"t".repeat(12 * 1024)}\r\ncontent-length: ${body.length}\r\n`],
        ["Authorization without scheme", `host: 127.0.0.1\r\nauthorization: ${srv?.token ?? "x"}\r\ncontent-length: ${body.length}\r\n`],
      ];
      for (const [label, headers] of headerSets) {
        const chunked = /transfer-encoding: chunked/.test(headers);
        const payload = chunked ? `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` : body;
        const hasType = /content-type/.test(headers);
        const request = `POST /ingest HTTP/1.1\r\n${headers}${hasType ? "" : "content-type: application/json\r\n"}connection: close\r\n\r\n${payload}`;
        const res = await rawHttp(srv.port, request, 5000).catch(() => null);
        if (res) await fuzz.judgeRaw({ endpoint: "hostile headers", label, expect: "any" }, res, { transport: true });
        else fuzz.record("hostile headers", "closed");
        expect(await fuzz.healthy()).toBe(true);
      }
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );
});

const PAGES = [
  "/viz",
  "/identity/ui",
  "/dashboard",
  "/memories",
  "/favicon.svg",
  "/viz/vendor/force-graph.min.js",
  "/viz/vendor/3d-force-graph.min.js",
  "/dashboard/vendor/chart.js",
  "/assets/auth.js",
  "/assets/vendor/marked.js",
  "/assets/vendor/purify.js",
  "/assets/memories/app.js",
];
const FILE_ROUTES = [
  "/viz/vendor/",
  "/dashboard/vendor/",
  "/assets/",
  "/assets/vendor/",
  "/assets/viz/",
  "/assets/identity/",
  "/assets/dashboard/",
  "/assets/memories/",
];

describe("pages and vendor files", () => {
  test(
    "page shells and allowlisted files answer 200; traversal in file names is a JSON 404 that leaks nothing",
    async () => {
      // A `..` segment is resolved before routing (/viz/vendor/.. is /viz, /assets/.. is /): such a 200 must be one of these bodies.
      const served = new Set<string>();
      for (const p of [
        ...PAGES,
        "/",
        "/assets/viz/app.js",
        "/assets/identity/app.js",
        "/assets/dashboard/app.js",
        "/assets/viz/style.css",
        "/assets/identity/style.css",
        "/assets/dashboard/style.css",
      ]) {
        const res = await fetch(srv.url + p);
        fuzz.record(`GET ${p}`, res.status);
        expect(res.status).toBe(200);
        served.add(await res.text());
      }
      const names = [
        ...TRAVERSAL,
        "force-graph.min.js/../../../package.json",
        "chart.js%2f..%2f..%2fpackage.json",
        "auth.js/",
        "AUTH.JS",
        "x".repeat(8000),
        "%ff%fe",
        "index.html",
        "app.ts",
        "..%00/app.js",
      ];
      for (const route of FILE_ROUTES) {
        for (const name of names) {
          const raw = await rawGet(srv.port, route + name.replace(/ /g, "%20"));
          const normalized = raw.status === 200 && served.has(raw.body);
          await fuzz.judgeRaw({ endpoint: `GET ${route}<file>`, label: name.slice(0, 40), expect: normalized ? "any" : "reject" }, raw, { transport: true });
          expect(raw.body).not.toContain(srv.token);
          expect(raw.body).not.toContain('"dependencies"');
          expect(raw.body).not.toContain("root:x:0");
        }
      }
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );
});

const ROUTES: Record<string, string[]> = {
  "/": ["GET"],
  "/health": ["GET"],
  "/ingest": ["POST"],
  "/distill": ["POST"],
  "/recall-index": ["POST"],
  "/search": ["GET"],
  "/recent": ["GET"],
  "/memory": ["GET", "PATCH", "DELETE"],
  "/memory/history": ["GET"],
  "/memory/restore": ["POST"],
  "/learnings": ["GET"],
  "/lessons": ["GET"],
  "/index": ["GET"],
  "/graph": ["GET"],
  "/identity": ["GET", "PUT", "DELETE"],
  "/context": ["GET", "PUT", "DELETE"],
  "/account": ["GET"],
  "/dashboard/data": ["GET"],
  "/memories": ["GET"],
  "/memories/list": ["GET"],
  "/memories/count": ["GET"],
  "/memories/detail": ["GET"],
  "/memories/facets": ["GET"],
  "/memories/delete": ["POST"],
  "/viz": ["GET"],
  "/identity/ui": ["GET"],
  "/dashboard": ["GET"],
  "/viz/vendor/force-graph.min.js": ["GET"],
  "/dashboard/vendor/chart.js": ["GET"],
  "/assets/auth.js": ["GET"],
  "/sse": ["GET"],
  "/messages": ["POST"],
  "/mcp": ["GET", "POST", "DELETE"],
  "/nonexistent": [],
};

describe("wrong methods", () => {
  test(
    "a method a path does not serve is a JSON 404/405, with or without a body",
    async () => {
      for (const [path, allowed] of Object.entries(ROUTES)) {
        for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
          if (allowed.includes(method)) continue;
          const body = method === "GET" || method === "OPTIONS" ? undefined : JSON.stringify({ content: "wrong method", id: ids[0] });
          await fuzz.send({
            endpoint: `${method} ${path}`,
            label: "wrong method",
            method,
            path,
            headers: body ? { "content-type": "application/json" } : {},
            body,
            expect: "reject",
          });
        }
        // Methods fetch() will not send as given.
        for (const method of ["PROPFIND", "FROBNICATE", "TRACE", "CONNECT"]) {
          const body = '{"id":"x"}';
          const res = await rawHttp(
            srv.port,
            `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
          ).catch(() => null);
          if (res) await fuzz.judgeRaw({ endpoint: `${method} ${path}`, label: "unknown method", expect: "reject" }, res, { transport: true });
          else fuzz.record(`${method} ${path}`, "closed");
        }
      }
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe("over-limit bodies", () => {
  const declared = (path: string, method: string, length: number) =>
    rawHttp(
      srv.port,
      `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n{"content":"`,
    );

  test(
    "> 25 MB is 413 before the body is read, in the one error shape however far over (Bun's own cap is lifted)",
    async () => {
      for (const [method, path] of [
        ["POST", "/ingest"],
        ["POST", "/distill"],
        ["PUT", "/identity"],
        ["POST", "/recall-index"],
        ["POST", "/messages"],
        ["POST", "/mcp"],
      ]) {
        const res = await declared(path, method, MAX_BODY_BYTES + 1);
        await fuzz.judgeRaw({ endpoint: `${method} ${path}`, label: "declared 25 MB + 1", expect: "reject" }, res);
        expect(res.status).toBe(413);
        expect(JSON.parse(res.body).error.code).toBe("too_large");
        const far = await declared(path, method, 200 * 1024 * 1024);
        await fuzz.judgeRaw({ endpoint: `${method} ${path}`, label: "declared 200 MB", expect: "reject" }, far);
        expect(far.status).toBe(413);
        expect(JSON.parse(far.body).error.code).toBe("too_large");
      }
      const big = new Uint8Array(MAX_BODY_BYTES + 2 * 1024 * 1024).fill(0x61);
      const sent = await fetch(`${srv.url}/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
      const sentBody = await sent.text();
      await fuzz.judge({ endpoint: "POST /ingest", label: "27 MB body", expect: "reject" }, sent.status, sentBody);
      expect(sent.status).toBe(413);
      expect(JSON.parse(sentBody).error.code).toBe("too_large");
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < 28; i++) c.enqueue(big.subarray(0, 1024 * 1024));
          c.close();
        },
      });
      const chunked = await fetch(`${srv.url}/distill`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit);
      await fuzz.judge({ endpoint: "POST /distill", label: "28 MB chunked", expect: "reject" }, chunked.status, await chunked.text(), { transport: true });
      expect(chunked.status).toBe(413);
      await finish();
    },
    FUZZ_TIMEOUT_MS,
  );
});
