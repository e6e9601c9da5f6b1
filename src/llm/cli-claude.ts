import type { CliSpec } from "./cli-spec";
import { CliFailure, parseEnvelope } from "./cli-spec";

/**
 * Claude Code's print mode: `claude -p` reads the prompt on stdin when no
 * prompt argument is given, and `--output-format json` prints one envelope
 * `{type: "result", subtype, is_error, result, ...}` whose `result` is the
 * model's text. `--tools ""` mounts no built-in tool and `--strict-mcp-config`
 * (with no --mcp-config) none of the user's MCP servers: the model can only
 * answer. `--no-session-persistence` keeps these calls out of the user's
 * session list (and out of memsvc's own capture).
 */
export const claudeCli: CliSpec = {
  provider: "claude-cli",
  bin: "claude",
  name: "Claude Code",
  mode: "Claude Code headless, subscription",
  loginHint: "run `claude` in a terminal once and log in (or `claude auth login`)",
  args: (model) => ["-p", "--output-format", "json", "--tools", "", "--strict-mcp-config", "--no-session-persistence", ...(model ? ["--model", model] : [])],
  reportedError(run) {
    const env = parseEnvelope(run.stdout);
    if (!env) return null;
    if (env.is_error === true || (typeof env.subtype === "string" && env.subtype !== "success")) {
      return typeof env.result === "string" && env.result.trim() ? env.result : `its result was "${String(env.subtype ?? "error")}"`;
    }
    return null;
  },
  reply(run) {
    const env = parseEnvelope(run.stdout);
    if (!env) throw new CliFailure("printed no JSON envelope on stdout (is it older than `--output-format json`? check `claude --version`)");
    const failed = claudeCli.reportedError(run);
    if (failed !== null) throw new CliFailure(`reported an error: ${failed}`);
    if (typeof env.result !== "string") throw new CliFailure("printed an envelope without a `result` text");
    return env.result;
  },
};
