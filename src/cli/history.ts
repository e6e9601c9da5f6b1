import { loadConfig } from "../config";
import { serverFetch } from "../server-client";
import { parseFlags, UsageError } from "./args";

export const HISTORY_HELP = `memsvc history <id> [--restore <version>] [--json]

Lists the earlier versions of a memory (id: its first 8 characters or the full
UUID), newest first: what PATCH /memory, memsvc_update, a distill that
restated or corrected it, or a nightly merge replaced. The last 20 are kept.
--restore <version> makes that version current again; the text it replaces
is kept as a new version. Talks to the running server (serverUrl, env
MEMSVC_URL) with the configured token. Exits 1 when the server refuses
(unknown id or version) or does not answer.`;

/**
 * A client of the running server, not of the database: a restore re-embeds
 * the text and must reach the server's in-memory vector index.
 */
export async function runHistory(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { restore: { type: "string", short: "r" }, json: { type: "boolean" } }, true);
  if (values.help) {
    console.log(HISTORY_HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("give exactly one memory id");
  const id = positionals[0];
  if (values.restore !== undefined && !/^\d+$/.test(values.restore)) throw new UsageError(`--restore takes a version number, got "${values.restore}"`);
  const config = loadConfig();
  const headers: Record<string, string> = { "content-type": "application/json" };
  let res: Response;
  try {
    res =
      values.restore === undefined
        ? await serverFetch(config, `/memory/history?id=${encodeURIComponent(id)}`, { headers, signal: AbortSignal.timeout(10_000) })
        : await serverFetch(config, "/memory/restore", {
            method: "POST",
            headers,
            body: JSON.stringify({ id, version: Number(values.restore) }),
            signal: AbortSignal.timeout(60_000),
          });
  } catch (e) {
    console.error(`memsvc history: no server answers at ${config.serverUrl} (${(e as Error).message}); start one with \`memsvc server\``);
    return 1;
  }
  const body = (await res.json().catch(() => null)) as Record<string, any> | null;
  if (!res.ok || body === null) {
    console.error(`memsvc history: ${body?.error?.message ?? `HTTP ${res.status}`}`);
    return 1;
  }
  if (values.json) {
    console.log(JSON.stringify(body, null, 2));
    return 0;
  }
  if (values.restore !== undefined) {
    console.log(`restored version ${body.restored_version} of memory ${body.memory.short_id}; the replaced text is now the newest version`);
    return 0;
  }
  const versions = body.versions as Record<string, any>[];
  const lines = [
    `memory ${body.short_id} (${body.id}), current (${body.current.memory_type}, project ${body.current.project ?? "-"}, updated ${body.current.updated_at}):`,
    indent(body.current.content),
  ];
  if (versions.length === 0) lines.push("", "no earlier versions");
  for (const v of versions) {
    lines.push(
      "",
      `version ${v.version}  replaced ${v.replaced_at} by ${v.reason}${v.source_id ? ` (from memory ${String(v.source_id).slice(0, 8)})` : ""}  ${v.memory_type}, project ${v.project ?? "-"}`,
      indent(v.content),
    );
  }
  console.log(lines.join("\n"));
  return 0;
}

const indent = (text: string) => text.replace(/^/gm, "    ");
