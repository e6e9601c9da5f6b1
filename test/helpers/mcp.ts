import { join } from "node:path";
import { BUN, run } from "./process";

export type DriverStep = ({ list: true } | { call: string; args?: Record<string, unknown> } | { sleep: number }) & { label?: string };
export interface DriverResult {
  label?: string;
  tools?: { name: string; schema: any; description: string }[];
  isError?: boolean;
  text?: string;
  /** Server session id the call went to. */
  session?: string;
  error?: string;
}

/** Runs the MCP SDK client in a separate process (test/mcp/client-driver.ts) against `url`. */
export async function drive(
  url: string,
  kind: "sse" | "http",
  plan: { sessions?: number; token?: string; steps: DriverStep[] },
  timeoutMs = 30_000,
): Promise<DriverResult[][]> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const r = await run([BUN, join(import.meta.dir, "..", "mcp", "client-driver.ts"), url, kind, JSON.stringify(plan)], env, undefined, timeoutMs);
  if (r.code !== 0) throw new Error(`client driver exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
  const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { sessions: { results: DriverResult[] }[] };
  return out.sessions.map((x) => x.results);
}

/** Results of one session by label. */
export function byLabel(results: DriverResult[]): Record<string, DriverResult> {
  const out: Record<string, DriverResult> = {};
  for (const r of results) if (r.label) out[r.label] = r;
  return out;
}
