import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CliRun } from "./cli-process";
import type { CliSpec } from "./cli-spec";
import { CliFailure } from "./cli-spec";

/**
 * `codex exec` reads its instructions from stdin when the prompt is `-`.
 * `--json` turns stdout into JSONL events (`turn.failed`, `error` carry the
 * reason of a failure; stderr would echo the prompt), `-o` writes the final
 * agent message to a file. `--sandbox read-only`: nothing it runs can write;
 * `--skip-git-repo-check`: the temp folder is no repository; `--ephemeral`:
 * no rollout file, so memsvc's own capture never reads these calls back.
 */
const LAST_MESSAGE = "last-message.txt";

export const codexCli: CliSpec = {
  provider: "codex-cli",
  bin: "codex",
  name: "Codex CLI",
  mode: "Codex CLI headless, subscription",
  loginHint: "run `codex login` in a terminal",
  args: (model, workDir) => [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--sandbox",
    "read-only",
    "--ephemeral",
    "-o",
    join(workDir, LAST_MESSAGE),
    ...(model ? ["-m", model] : []),
    "-",
  ],
  reportedError(run) {
    let reason: string | null = null;
    for (const e of events(run)) {
      if (e.type === "turn.failed") reason = messageOf(e.error) ?? "the turn failed";
      else if (e.type === "error") reason = messageOf(e) ?? reason;
    }
    return reason;
  },
  reply(run, workDir) {
    const failed = codexCli.reportedError(run);
    if (failed !== null) throw new CliFailure(`reported an error: ${failed}`);
    const file = join(workDir, LAST_MESSAGE);
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      if (text.trim()) return text;
    }
    // Versions without -o still end the stream with the agent's message.
    let last: string | null = null;
    for (const e of events(run)) {
      const item = e.item as Record<string, unknown> | undefined;
      if (e.type === "item.completed" && item?.type === "agent_message" && typeof item.text === "string") last = item.text;
    }
    if (last === null) throw new CliFailure("finished without an agent message (no -o file, no agent_message event)");
    return last;
  },
};

function events(run: CliRun): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of run.stdout.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const v = JSON.parse(t);
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v);
    } catch {
      /* a line that is not an event */
    }
  }
  return out;
}

function messageOf(v: unknown): string | null {
  const m = v && typeof v === "object" ? (v as Record<string, unknown>).message : null;
  return typeof m === "string" && m.trim() ? m : null;
}
