import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CliSpec } from "./cli-spec";
import { CliFailure, parseEnvelope } from "./cli-spec";

/**
 * Gemini CLI's headless mode: `-p` forces it and its text is appended to
 * what arrives on stdin, so the prompt goes on stdin and `-p` carries only a
 * fixed line. `--output-format json` prints `{response, stats, error?}`.
 * `-e none` loads no extension; headless mode offers no tool that needs an
 * approval, so nothing can write.
 */
export const GEMINI_INSTRUCTION = "Answer the request above exactly as it asks.";

export const geminiCli: CliSpec = {
  provider: "gemini-cli",
  bin: "gemini",
  name: "Gemini CLI",
  mode: "Gemini CLI headless, subscription",
  loginHint: "run `gemini` in a terminal once and sign in (or set GEMINI_API_KEY for it)",
  args: (model) => ["-p", GEMINI_INSTRUCTION, "--output-format", "json", "-e", "none", ...(model ? ["-m", model] : [])],
  reportedError(run) {
    const env = parseEnvelope(run.stdout) ?? parseEnvelope(run.stderr);
    const error = env?.error;
    if (!error) return null;
    if (typeof error === "string") return error;
    const message = (error as Record<string, unknown>).message;
    return typeof message === "string" && message.trim() ? message : "an error without a message";
  },
  reply(run) {
    const env = parseEnvelope(run.stdout);
    if (!env) throw new CliFailure("printed no JSON on stdout (is it older than `--output-format json`? check `gemini --version`)");
    const failed = geminiCli.reportedError(run);
    if (failed !== null) throw new CliFailure(`reported an error: ${failed}`);
    if (typeof env.response !== "string") throw new CliFailure("printed JSON without a `response` text");
    return env.response;
  },
  cleanup(workDir) {
    // Gemini CLI records every session, headless ones too, under
    // ~/.gemini/tmp/<sha256 of its cwd>/; `memsvc capture --harness gemini`
    // reads those, and would distil this call's prompt (a transcript) again.
    // The folder of this call's own temp cwd holds nothing of the user's.
    // As Node's os.homedir() in the CLI reads it: HOME first (Bun's homedir() ignores a changed HOME).
    const home = process.platform === "win32" ? homedir() : process.env.HOME || homedir();
    rmSync(join(home, ".gemini", "tmp", createHash("sha256").update(workDir).digest("hex")), { recursive: true, force: true });
  },
};
