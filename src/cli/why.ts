import { loadConfig } from "../config";
import { DROP_REASON_HELP, renderReceipts, type ReceiptView } from "../core/receipts";
import { parseFlags, UsageError } from "./args";

export const WHY_HELP = `memsvc why [--session <id>] [--last <n>] [--memory <id>] [--search] [--json]

Shows what memory gave the agent and why, as a readable trace of receipts
(oldest first): each prompt's recall block (or each agent search) with the
memories injected, their score and its parts (full text, vector, graph,
topic, strength, recency, stale factor), their tokens, whether the agent then
used them, and the near misses with the reason they were left out
(${DROP_REASON_HELP.replace(/; /g, ";\n ")})

  --session <id>   one session's receipts, its recall blocks and the agent's
                   searches in it (X-Memsvc-Session, or the MCP session)
                   together (default: every session's recall blocks)
  --last <n>       the last n receipts (default 5, at most 200)
  --memory <id>    only receipts that injected this memory
  --search         agent searches only (without --session: instead of recall
                   blocks)
  --json           the receipts as GET /recall/receipts answers them

Talks to the running server (serverUrl, env MEMSVC_URL) with the configured
token. Exits 1 when no server answers or it refuses.`;

export async function runWhy(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      session: { type: "string", short: "s" },
      last: { type: "string", short: "n" },
      memory: { type: "string" },
      search: { type: "boolean" },
      json: { type: "boolean" },
    },
    true,
  );
  if (values.help) {
    console.log(WHY_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (values.last !== undefined && !/^[1-9]\d{0,2}$/.test(values.last)) throw new UsageError(`--last takes a number from 1 to 200, got "${values.last}"`);
  const params = new URLSearchParams({ limit: String(Math.min(200, Number(values.last ?? 5))) });
  // A session's trace is every receipt of it, in order: a search between two prompts belongs there.
  if (values.search || !values.session) params.set("kind", values.search ? "search" : "recall");
  if (values.session) params.set("session_id", values.session);
  if (values.memory) params.set("memory", values.memory);
  const config = loadConfig();
  const headers: Record<string, string> = config.token ? { authorization: `Bearer ${config.token}` } : {};
  let res: Response;
  try {
    res = await fetch(`${config.serverUrl}/recall/receipts?${params}`, { headers, signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    console.error(`memsvc why: no server answers at ${config.serverUrl} (${(e as Error).message}); start one with \`memsvc server\``);
    return 1;
  }
  const body = (await res.json().catch(() => null)) as { receipts?: ReceiptView[]; error?: { message?: string } } | null;
  if (!res.ok || !body?.receipts) {
    console.error(`memsvc why: ${body?.error?.message ?? `HTTP ${res.status}`}`);
    return 1;
  }
  console.log(values.json ? JSON.stringify(body, null, 2) : renderReceipts(body.receipts));
  return 0;
}
