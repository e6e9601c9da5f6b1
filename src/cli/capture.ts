import { existsSync } from "node:fs";
import { defaultRoot, discover, HARNESSES, sourceAgentFor, type Harness } from "../capture/harnesses";
import { flatDir, flatten } from "../capture/flatten";
import { readGeminiSession } from "../capture/reader-gemini";
import { readBacklog } from "../capture/backlog";
import { capture, type Transcript } from "../capture/run";
import { detectFormat, headOf } from "../capture/transcript";
import { acquireLock, stateDir } from "../capture/watermark";
import { loadConfig, type Config } from "../config";
import { parseFlags, UsageError } from "./args";
import { counted } from "../core/text";
import { NotUtf8Error, readUtf8File } from "../utf8";

export const CAPTURE_HELP = `memsvc capture [--harness <h>] [--dir <dir>] [--file <f>] [--format <f>] [--backlog] [--dry-run] [--json]

Ships the unseen part of agent session transcripts to the server's POST /distill,
denoised locally without a language model: human and agent words are kept,
tool calls become one-line summaries, tool output is cut to its head.

  --harness <h>     only this harness: claude, codex, gemini or opencode.
                    Default: every harness whose session folder exists:
                      claude    ~/.claude/projects/<project>/<session>.jsonl
                      codex     $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl
                                (CODEX_HOME defaults to ~/.codex)
                      gemini    ~/.gemini/tmp/<project>/chats/session-*.json
                      opencode  $XDG_DATA_HOME/opencode/storage (default
                                ~/.local/share/opencode/storage)
  --dir <dir>       that harness's folder instead of its default (without
                    --harness: the Claude Code projects folder)
  --file <f>        one transcript instead: Claude Code, Codex rollout or
                    generic JSONL, or a Gemini CLI chat JSON
  --format <f>      claude, codex, gemini or generic ({role, content} per
                    line); guessed from the file when omitted
  --backlog         only the sessions that wait: their capture got a 503 (no
                    language model, or it failed) or found no server
                    (\`memsvc doctor\` and \`memsvc status\` count them;
                    \`memsvc setup --llm ...\` runs this once a model answers)
  --dry-run         show what would be sent; send nothing, change nothing
                    (Gemini and opencode sessions are still copied to their
                    flat files, which are caches, not watermarks)
  --json            print the per-session report as JSON

Each session's watermark lives in <home>/state/capture/ and moves only past
segments the server acknowledged (2xx): after a 503 or with no server running,
the next run resends the same segments (the server skips any it already has).
Gemini CLI and opencode rewrite their session files in place, so their
messages are first copied once each into an append-only JSONL under
<home>/state/capture/flat/ and captured from there.
Provenance: source_agent is sourceAgent from config.json when set, else the
harness (claude-code, codex-cli, gemini-cli, opencode); agentId and
sourceDomain from config.json; the project is the session's working
directory name.
Exit status: 0 when everything new was sent (or nothing was new), 1 when
something is left for the next run, 2 on usage errors.`;

const FILE_FORMATS = ["claude", "codex", "gemini", "generic"] as const;
const FORMAT_HARNESS: Record<string, Harness | null> = { claude: "claude", codex: "codex", gemini: "gemini", generic: null };

export async function runCapture(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    harness: { type: "string" },
    dir: { type: "string" },
    file: { type: "string" },
    format: { type: "string" },
    "dry-run": { type: "boolean" },
    json: { type: "boolean" },
    backlog: { type: "boolean" },
  });
  if (values.help) {
    console.log(CAPTURE_HELP);
    return 0;
  }
  if (values.format !== undefined && !(FILE_FORMATS as readonly string[]).includes(values.format))
    throw new UsageError(`--format must be one of ${FILE_FORMATS.join(", ")}, got "${values.format}"`);
  if (values.harness !== undefined && !(HARNESSES as readonly string[]).includes(values.harness))
    throw new UsageError(`--harness must be one of ${HARNESSES.join(", ")}, got "${values.harness}"`);
  if (values.dir !== undefined && values.file !== undefined) throw new UsageError("give --dir or --file, not both");
  if (values.harness !== undefined && values.file !== undefined) throw new UsageError("give --harness or --file, not both (--format names a file's harness)");
  if (values.format !== undefined && values.file === undefined) throw new UsageError("--format applies to --file only");
  if (values.backlog && (values.file !== undefined || values.dir !== undefined || values.harness !== undefined))
    throw new UsageError("--backlog takes no --file, --dir or --harness");
  const config = loadConfig();
  const state = stateDir(config.home);
  let transcripts: Transcript[];
  if (values.backlog) {
    transcripts = readBacklog(config.home).sessions.map((w) => ({
      path: w.file,
      format: (w.format ?? undefined) as Transcript["format"],
      agent: w.agent ?? undefined,
    }));
  } else if (values.file !== undefined) {
    if (!existsSync(values.file)) throw new UsageError(`no such file: ${values.file}`);
    try {
      transcripts = [fileTranscript(values.file, values.format, state, config)];
    } catch (e) {
      if (!(e instanceof NotUtf8Error)) throw e;
      console.error(`memsvc capture: ${e.message}; skipped`);
      return 1;
    }
  } else {
    const harnesses: Harness[] = values.harness ? [values.harness as Harness] : values.dir !== undefined ? ["claude"] : [...HARNESSES];
    if (values.dir !== undefined && !existsSync(values.dir)) throw new UsageError(`no such folder: ${values.dir}`);
    transcripts = harnesses.flatMap((h) =>
      discover(h, values.dir ?? defaultRoot(h), state).map((f) => ({ path: f.path, format: f.format, agent: sourceAgentFor(config, h) })),
    );
  }
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
        const where = `${r.sessionId}${r.project ? ` (${r.project})` : ""}`;
        if (r.status === "failed" && r.segments === 0) {
          console.log(`${where}: not read: ${r.error}`);
          continue;
        }
        const what =
          r.status === "dry run"
            ? `${counted(r.segments, "segment")} would be sent`
            : r.status === "failed"
              ? `sent ${r.sent}/${counted(r.segments, "segment")}, stopped: ${r.error}`
              : `sent ${counted(r.sent, "segment")}`;
        console.log(`${where}: ${what}; ${counted(r.memories, "memory", "memories")}, ${r.dropped} dropped; ${r.bytesIn} bytes read, ${r.bytesSent} sent`);
      }
      if (result.reports.length === 0) console.log(`nothing new in ${counted(transcripts.length, "transcript")}`);
    }
    return result.failed ? 1 : 0;
  } finally {
    release();
  }
}

/** One named file: a Gemini chat JSON goes through its flat copy; JSONL formats are read in place. */
function fileTranscript(file: string, format: string | undefined, state: string, config: Config): Transcript {
  const gemini = format === "gemini" || (format === undefined && file.endsWith(".json"));
  if (gemini) {
    // The reader takes an unreadable recording for one being rewritten (null); a named file deserves the reason.
    readUtf8File(file);
    const session = readGeminiSession(file);
    if (!session) throw new UsageError(`${file} is not a Gemini CLI chat recording (a JSON object with a messages list)`);
    return { path: flatten(flatDir(state), session), format: "flat", agent: sourceAgentFor(config, "gemini") };
  }
  const f = (format as "claude" | "codex" | "generic" | undefined) ?? detectFormat(headOf(file));
  return { path: file, format: f, agent: sourceAgentFor(config, FORMAT_HARNESS[f] ?? null) };
}
