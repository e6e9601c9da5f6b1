import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { capture, findTranscripts, type Transcript } from "../capture/run";
import { acquireLock, stateDir } from "../capture/watermark";
import { loadConfig } from "../config";
import { parseFlags, UsageError } from "./args";
import { counted } from "../core/text";

export const CAPTURE_HELP = `memsvc capture [--dir <dir>] [--file <jsonl>] [--format claude|generic] [--dry-run] [--json]

Ships the unseen part of agent session transcripts to the server's POST /distill,
denoised locally without a language model: human and agent words are kept,
tool calls become one-line summaries, tool output is cut to its head.

  --dir <dir>       Claude Code projects folder (default ~/.claude/projects):
                    every <project>/<session>.jsonl in it
  --file <jsonl>    one transcript instead (Claude Code or generic JSONL)
  --format <f>      claude (Claude Code lines) or generic ({role, content} per
                    line); guessed from the file when omitted
  --dry-run         show what would be sent; send nothing, change nothing
  --json            print the per-session report as JSON

Each session's watermark lives in <home>/state/capture/ and moves only past
segments the server acknowledged (2xx): after a 503 or with no server running,
the next run resends the same segments (the server skips any it already has).
Provenance comes from config.json: sourceAgent, agentId, sourceDomain; the
project is the session's working directory name.
Exit status: 0 when everything new was sent (or nothing was new), 1 when
something is left for the next run, 2 on usage errors.`;

export async function runCapture(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    dir: { type: "string" },
    file: { type: "string" },
    format: { type: "string" },
    "dry-run": { type: "boolean" },
    json: { type: "boolean" },
  });
  if (values.help) {
    console.log(CAPTURE_HELP);
    return 0;
  }
  if (values.format !== undefined && values.format !== "claude" && values.format !== "generic") throw new UsageError(`--format must be claude or generic, got "${values.format}"`);
  if (values.dir !== undefined && values.file !== undefined) throw new UsageError("give --dir or --file, not both");
  const format = values.format as Transcript["format"];
  let transcripts: Transcript[];
  if (values.file !== undefined) {
    if (!existsSync(values.file)) throw new UsageError(`no such file: ${values.file}`);
    transcripts = [{ path: values.file, format }];
  } else {
    const dir = values.dir ?? join(homedir(), ".claude", "projects");
    if (values.dir !== undefined && !existsSync(dir)) throw new UsageError(`no such folder: ${dir}`);
    transcripts = findTranscripts(dir).map((path) => ({ path, format }));
  }
  const config = loadConfig();
  const dryRun = values["dry-run"] === true;
  const release = dryRun ? () => {} : acquireLock(stateDir(config.home));
  if (!release) {
    console.log("memsvc capture: another capture is running for this home; nothing to do");
    return 0;
  }
  try {
    const result = await capture({ config, transcripts, dryRun, log: (line) => console.error(line) });
    if (values.json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      for (const r of result.reports) {
        const what = r.status === "dry run" ? `${r.segments} segment(s) would be sent` : r.status === "failed" ? `sent ${r.sent}/${r.segments}, stopped: ${r.error}` : `sent ${r.sent} segment(s)`;
        console.log(`${r.sessionId}${r.project ? ` (${r.project})` : ""}: ${what}; ${counted(r.memories, "memory", "memories")}, ${r.dropped} dropped; ${r.bytesIn} bytes read, ${r.bytesSent} sent`);
      }
      if (result.reports.length === 0) console.log(`nothing new in ${transcripts.length} transcript(s)`);
    }
    return result.failed ? 1 : 0;
  } finally {
    release();
  }
}
