import { DEFAULT_LLM_DAILY_CAP } from "../config";
import { findHarnessClis } from "../llm/find-cli";
import type { LlmCandidate } from "./llm-detect";

/**
 * The harness CLIs on PATH as model candidates for `memsvc setup`. Opt-in
 * only: each call spends the user's subscription, so setup never picks one
 * on its own (not even with --yes); the command is written as found, so the
 * server started at login needs no PATH of the user's shell.
 */
export function cliCandidates(env: NodeJS.ProcessEnv): LlmCandidate[] {
  return findHarnessClis(env).map((c) => ({
    id: c.provider,
    label: `${c.name} headless mode (${c.command}, your subscription)`,
    llm: { provider: c.provider, command: c.command, dailyCap: DEFAULT_LLM_DAILY_CAP },
  }));
}
