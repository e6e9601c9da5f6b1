import { afterAll, afterEach } from "bun:test";
/**
 * An OpenAI-compatible chat completions server of our own, on a real socket
 * (127.0.0.1, port 0). Tests script its behaviour per request and read back
 * what reached "the model".
 */

export type FakeReply =
  /** A well-formed completion whose message content is JSON.stringify(json). */
  | { json: unknown; delayMs?: number }
  /** A completion whose message content is exactly this text (fences, prose, garbage...). */
  | { text: string; delayMs?: number }
  /** Never answers (until the fake is stopped). */
  | { hang: true }
  /** Sends status and headers, then never finishes the body. */
  | { stall: true }
  /** An HTTP error with an OpenAI-style error body. */
  | { status: number; message?: string; delayMs?: number }
  /** Not a chat completion at all: this raw body with status 200. */
  | { raw: string; contentType?: string; delayMs?: number }
  /** Waits for the returned promise (e.g. a gate the test opens), then answers. */
  | { wait: Promise<unknown>; then: FakeReply };

export interface RecordedRequest {
  path: string;
  headers: Record<string, string>;
  body: any;
  /** The whole request body as received. */
  raw: string;
}

export interface FakeLlm {
  url: string;
  /** For llm.baseURL (the OpenAI client appends /chat/completions). */
  baseURL: string;
  requests: RecordedRequest[];
  /** Replies used in order, one per request; when empty, `fallback` answers. */
  script(...replies: (FakeReply | ((req: RecordedRequest) => FakeReply))[]): void;
  fallback: (req: RecordedRequest) => FakeReply;
  /** Every message content the fake received, joined (to assert what reached the model). */
  receivedText(): string;
  reset(): void;
  stop(): Promise<void>;
}

/** A completion carrying {"memories": [...]} with the given contents. */
export function memoriesReply(...memories: (string | Record<string, unknown>)[]): FakeReply {
  return { json: { memories: memories.map((m) => (typeof m === "string" ? { content: m, memory_type: "knowledge", tags: [] } : m)) } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function completion(content: string, model: string): Response {
  return Response.json({
    id: `chatcmpl-${crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  });
}

function headersOf(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

/**
 * One fake model for a whole test file: started now, reset after each test
 * (queue, recorded requests and fallback), stopped after the file.
 */
export function useFakeLlm(): FakeLlm {
  const fake = startFakeLlm();
  afterEach(() => fake.reset());
  afterAll(() => fake.stop());
  return fake;
}

export function startFakeLlm(): FakeLlm {
  const queue: (FakeReply | ((req: RecordedRequest) => FakeReply))[] = [];
  const requests: RecordedRequest[] = [];
  const pending = new Set<() => void>();
  const never = () => new Promise<void>((resolve) => pending.add(resolve));

  const answer = async (reply: FakeReply, model: string): Promise<Response> => {
    if ("wait" in reply) {
      await Promise.race([reply.wait, never()]);
      return answer(reply.then, model);
    }
    if ("hang" in reply) {
      await never();
      return new Response("stopped", { status: 503 });
    }
    if ("stall" in reply) {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"id":"chatcmpl-stall","object":"chat.completion","choices":['));
          // Never closed: the client sees headers and a partial body.
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    }
    if (reply.delayMs) await sleep(reply.delayMs);
    if ("status" in reply) return Response.json({ error: { message: reply.message ?? "fake failure", type: "server_error" } }, { status: reply.status });
    if ("raw" in reply) return new Response(reply.raw, { headers: { "content-type": reply.contentType ?? "application/json" } });
    if ("text" in reply) return completion(reply.text, model);
    return completion(JSON.stringify(reply.json), model);
  };

  const fake: FakeLlm = {
    url: "",
    baseURL: "",
    requests,
    script(...replies) {
      queue.push(...replies);
    },
    fallback: () => memoriesReply(),
    receivedText() {
      return requests.map((r) => r.raw).join("\n");
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      fake.fallback = () => memoriesReply();
    },
    async stop() {
      for (const release of pending) release();
      pending.clear();
      server.stop(true);
    },
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const raw = await request.text();
      let body: any = null;
      try {
        body = JSON.parse(raw);
      } catch {
        /* recorded as raw */
      }
      const rec: RecordedRequest = { path: url.pathname, headers: headersOf(request.headers), body, raw };
      if (!url.pathname.endsWith("/chat/completions")) return Response.json({ error: { message: `no route ${url.pathname}` } }, { status: 404 });
      requests.push(rec);
      const next = queue.shift() ?? fake.fallback;
      const reply = typeof next === "function" ? next(rec) : next;
      return answer(reply, body?.model ?? "fake");
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  fake.baseURL = `${fake.url}/v1`;
  return fake;
}
