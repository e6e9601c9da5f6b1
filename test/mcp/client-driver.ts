/**
 * Runs the MCP SDK's own client against a running memsvc, in its own process:
 *   bun test/mcp/client-driver.ts <base-url> <sse|http> '<plan json>'
 * plan: { sessions?: number, token?: string, steps: Step[] } where a step is
 *   { list: true } | { call: "<tool>", args?: {...} } | { sleep: <ms> }, each with an optional label
 * Every session runs the steps (sessions at once), then ends (DELETE for /mcp);
 * prints {sessions: [{results: [{label, tools | isError+text+session | error}]}]} as JSON.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

type Step = ({ list: true } | { call: string; args?: Record<string, unknown> } | { sleep: number }) & { label?: string };
interface Plan {
  sessions?: number;
  token?: string;
  steps: Step[];
}

const [base, kind, planText] = process.argv.slice(2);
const plan = JSON.parse(planText) as Plan;
const headers: Record<string, string> = plan.token ? { authorization: `Bearer ${plan.token}` } : {};

/** The server's id for this session: a silent reconnect would change it. */
function sessionOf(t: SSEClientTransport | StreamableHTTPClientTransport): string | undefined {
  if (t instanceof StreamableHTTPClientTransport) return t.sessionId;
  return (t as unknown as { _endpoint?: URL })._endpoint?.searchParams.get("sessionId") ?? undefined;
}

async function session(): Promise<{ results: unknown[] }> {
  const transport =
    kind === "sse"
      ? new SSEClientTransport(new URL(`${base}/sse`), {
          requestInit: { headers },
          eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) },
        })
      : new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: "driver-agent", version: "1.0.0" });
  const results: unknown[] = [];
  try {
    await client.connect(transport);
    for (const step of plan.steps) {
      const label = step.label;
      if ("sleep" in step) await Bun.sleep(step.sleep);
      else if ("list" in step)
        results.push({ label, tools: (await client.listTools()).tools.map((t) => ({ name: t.name, schema: t.inputSchema, description: t.description })) });
      else {
        try {
          const r = await client.callTool({ name: step.call, arguments: step.args ?? {} });
          const content = r.content as { type: string; text: string }[];
          results.push({ label, isError: r.isError === true, text: content.map((c) => c.text).join("\n"), session: sessionOf(transport) });
        } catch (e) {
          results.push({ label, error: (e as Error).message });
        }
      }
    }
  } catch (e) {
    results.push({ error: (e as Error).message });
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
  return { results };
}

const sessions = await Promise.all(Array.from({ length: plan.sessions ?? 1 }, () => session()));
console.log(JSON.stringify({ sessions }));
process.exit(0);
