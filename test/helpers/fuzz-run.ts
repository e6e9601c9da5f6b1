import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ARTIFACTS } from "./browser";
import { snapshot, type RawResponse } from "./fuzz";
import type { FuzzCase } from "./fuzz-cases";
import type { TestServer } from "./server";

/**
 * Sends fuzz cases one at a time and checks each answer: never a 5xx, a 4xx
 * always carries {error: {code, message}}, a refused request leaves every
 * row and file as it was. Problems are collected (not thrown) so a test
 * reports all of them at once; counts per endpoint and status are kept for
 * the report.
 */
export class Fuzzer {
  readonly problems: string[] = [];
  readonly counts: Record<string, Record<string, number>> = {};
  private last: Awaited<ReturnType<typeof snapshot>> | null = null;

  constructor(private readonly srv: TestServer) {}

  record(endpoint: string, status: number | string, n = 1): void {
    const c = (this.counts[endpoint] ??= {});
    c[status] = (c[status] ?? 0) + n;
  }

  /** The state before the next request: the last one's "after", unless something else changed it. */
  async resync(): Promise<void> {
    this.last = await snapshot(this.srv.services);
  }

  /** Checks status, error shape and (for a refusal) that nothing changed. `jsonRpc`: MCP transports answer JSON-RPC errors. */
  async judge(
    c: Pick<FuzzCase, "endpoint" | "label" | "expect">,
    status: number,
    body: string,
    opts: { jsonRpc?: boolean; transport?: boolean } = {},
  ): Promise<void> {
    this.record(c.endpoint, status);
    const where = `${c.endpoint} [${c.label}] -> ${status}`;
    const before = this.last ?? (await snapshot(this.srv.services));
    const after = await snapshot(this.srv.services);
    this.last = after;
    // Refusals of Bun's HTTP layer (before the app sees the request) come with an empty body.
    const bare = opts.transport === true && body === "" && TRANSPORT_REFUSALS.has(status);
    if (status >= 500 && !bare) this.problems.push(`${where}: server error ${body.slice(0, 300)}`);
    if (c.expect === "reject" && status < 400) this.problems.push(`${where}: accepted a request that must be refused: ${body.slice(0, 200)}`);
    if (status >= 400 && status < 500 && !bare) {
      const shape = errorShape(body, opts.jsonRpc ?? false);
      if (shape) this.problems.push(`${where}: ${shape}`);
    }
    if (status >= 400 && before.hash !== after.hash) {
      this.problems.push(`${where}: refused, yet the database or home changed ${JSON.stringify(diffCounts(before.counts, after.counts))}`);
    }
  }

  async send(c: FuzzCase): Promise<{ status: number; body: string }> {
    if (!this.last) await this.resync();
    let res: Response;
    try {
      res = await fetch(this.srv.url + c.path, { method: c.method, headers: c.headers, body: c.body });
    } catch (e) {
      this.record(c.endpoint, "connection-error");
      this.problems.push(`${c.endpoint} [${c.label}]: no answer: ${(e as Error).message}`);
      return { status: 0, body: "" };
    }
    const body = await res.text();
    await this.judge(c, res.status, body);
    return { status: res.status, body };
  }

  /** A raw-socket answer (see rawHttp): judged the same way. */
  judgeRaw(c: Pick<FuzzCase, "endpoint" | "label" | "expect">, r: RawResponse, opts: { transport?: boolean } = {}): Promise<void> {
    return this.judge(c, r.status, r.body, opts);
  }

  async healthy(): Promise<boolean> {
    try {
      return (await fetch(`${this.srv.url}/health`)).status === 200;
    } catch {
      return false;
    }
  }

  /** Counts per endpoint, written under test-artifacts/ for the report. */
  save(name: string): { requests: number; endpoints: number } {
    mkdirSync(ARTIFACTS, { recursive: true });
    const requests = Object.values(this.counts).reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0);
    writeFileSync(join(ARTIFACTS, `${name}.json`), JSON.stringify({ requests, perEndpoint: this.counts }, null, 2));
    return { requests, endpoints: Object.keys(this.counts).length };
  }
}

/** What Bun itself answers to a request line, header block or body past its limits. */
const TRANSPORT_REFUSALS = new Set([400, 413, 414, 431, 505]);

/** null when `body` is {error: {code, message}}; else what is wrong with it. */
export function errorShape(body: string, jsonRpc: boolean): string | null {
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `4xx body is not JSON: ${JSON.stringify(body.slice(0, 120))}`;
  }
  const e = parsed?.error;
  const codeOk = typeof e?.code === "string" || (jsonRpc && typeof e?.code === "number");
  if (!e || !codeOk || typeof e.message !== "string" || e.message.length === 0) return `4xx body lacks {error: {code, message}}: ${body.slice(0, 160)}`;
  return null;
}

function diffCounts(a: Record<string, number>, b: Record<string, number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(b)) if (a[k] !== b[k]) out[k] = `${a[k]} -> ${b[k]}`;
  return Object.keys(out).length ? out : { rows: "same counts, different content" };
}
