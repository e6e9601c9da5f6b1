import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Config, HarnessCliProvider } from "../config";
import { redactSecrets } from "../core/secrets";
import { unavailable } from "../errors";
import type { ChatMessage, LlmClient } from "./client";
import { claudeCli } from "./cli-claude";
import { codexCli } from "./cli-codex";
import { geminiCli } from "./cli-gemini";
import { runCli, type CliRun } from "./cli-process";
import { CliFailure, type CliSpec } from "./cli-spec";
import { LLM_CHILD_ENV } from "./child-env";
import { reserveCall } from "./daily-cap";
import { findOnPath, isExecutableFile } from "./find-cli";
import { extractJson } from "./json";

export const CLI_SPECS: Record<HarnessCliProvider, CliSpec> = { "claude-cli": claudeCli, "codex-cli": codexCli, "gemini-cli": geminiCli };

/** An answer is a JSON object of a few KB; more than this is a CLI gone wrong. */
const MAX_STDOUT_BYTES = 8 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;

const LOGGED_OUT =
  /not logged in|please (run )?\/?log ?in|log ?in (again|first|required)|login required|invalid api key|auth(entication)? (failed|required|error)|unauthori[sz]ed|set an auth method|credentials? (not found|missing|expired)|token (has )?expired|\b401\b/i;

/** "claude-cli (Claude Code headless, subscription) sonnet", as /health and logs show it. */
export function cliLabel(provider: HarnessCliProvider, model: string | null): string {
  return `${provider} (${CLI_SPECS[provider].mode}) ${model ?? "default model"}`;
}

/** The messages as one text for stdin: these CLIs take a prompt, not a chat. */
export function renderPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => (m.role === "assistant" ? `Your earlier answer:\n${m.content}` : m.content)).join("\n\n---\n\n");
}

export function createCliClient(llm: Config["llm"], provider: HarnessCliProvider, stateDir: string): LlmClient {
  const spec = CLI_SPECS[provider];
  const who = `${spec.bin} (${spec.name})`;
  return {
    label: cliLabel(provider, llm.model),
    async chatJson(messages, opts = {}) {
      // Last line of defence, as for the HTTP client: every prompt passes here.
      const outgoing: ChatMessage[] = [];
      for (const m of messages) outgoing.push({ role: m.role, content: (await redactSecrets(m.content)).text });
      const command = llm.command ?? findOnPath(spec.bin, process.env);
      if (command === null) throw unavailable(`${who} was not found on PATH; install it, or set llm.command to its absolute path`);
      if (!isExecutableFile(command)) throw unavailable(`llm.command ${command} is not an executable file`);
      if (opts.signal?.aborted) throw unavailable(`the call to ${who} was cancelled`);
      // Counted before it runs: a call that starts spends the subscription, whatever comes back.
      await reserveCall(stateDir, llm.dailyCap, who);
      // Resolved: the CLI sees its cwd without symlinks (macOS /var -> /private/var).
      const workDir = realpathSync(mkdtempSync(join(tmpdir(), "memsvc-llm-")));
      try {
        const run = await runCli(command, spec.args(llm.model, workDir), {
          stdin: renderPrompt(outgoing),
          cwd: workDir,
          env: { ...process.env, [LLM_CHILD_ENV]: "1", NO_COLOR: "1" },
          timeoutMs: llm.timeoutMs,
          signal: opts.signal,
          maxStdoutBytes: MAX_STDOUT_BYTES,
          maxStderrBytes: MAX_STDERR_BYTES,
        });
        const text = await answerOf(spec, who, run, workDir, llm.timeoutMs);
        const parsed = extractJson(text);
        // No snippet of the reply: the model may have echoed the transcript.
        if (parsed === null) throw unavailable(`${who} answered ${text.length} characters holding no JSON`);
        return parsed;
      } finally {
        rmSync(workDir, { recursive: true, force: true });
        try {
          spec.cleanup?.(workDir);
        } catch {
          /* best effort: the answer (or its error) matters more */
        }
      }
    },
  };
}

/** The reply text of a run, or the `unavailable` error saying why there is none. */
async function answerOf(spec: CliSpec, who: string, run: CliRun, workDir: string, timeoutMs: number): Promise<string> {
  if (run.spawnError) {
    const code = run.spawnError.code;
    if (code === "ENOENT") throw unavailable(`${who} was not found (${run.spawnError.path ?? spec.bin}); install it, or set llm.command to its absolute path`);
    if (code === "EACCES") throw unavailable(`${who} could not be started: permission denied`);
    throw unavailable(`${who} could not be started: ${run.spawnError.message}`);
  }
  if (run.aborted) throw unavailable(`the call to ${who} was cancelled; its process was stopped`);
  if (run.timedOut)
    throw unavailable(`${who} did not answer within ${Math.max(1, Math.round(timeoutMs / 1000))} s (llm.timeoutMs = ${timeoutMs}); its process was stopped`);
  if (run.overflow) throw unavailable(`${who} printed more than ${MAX_STDOUT_BYTES / 1024 / 1024} MiB; its process was stopped`);
  const reported = spec.reportedError(run);
  if (LOGGED_OUT.test(reported ?? "") || (run.code !== 0 && LOGGED_OUT.test(run.stderr))) {
    throw unavailable(`${who} is not logged in: ${spec.loginHint}`);
  }
  if (run.code !== 0) {
    const why = reported ?? lastLine(run.stderr);
    const how = run.code === null ? `was killed by ${run.signal}` : `exited with code ${run.code}`;
    throw unavailable(`${who} ${how}${why ? `: ${await clip(why)}` : ""}`);
  }
  try {
    return spec.reply(run, workDir);
  } catch (e) {
    if (e instanceof CliFailure) throw unavailable(`${who} ${await clip(e.message, 300)}`);
    throw e;
  }
}

function lastLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  const lines = text
    .replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.at(-1) ?? "";
}

/** A CLI's own words for an error message: one line, bounded, secrets redacted. */
async function clip(text: string, max = 200): Promise<string> {
  const one = text.replace(/\s+/g, " ").trim();
  return (await redactSecrets(one.length > max ? `${one.slice(0, max)}...` : one)).text;
}
