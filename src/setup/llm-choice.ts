import { KEY_PROVIDERS, keyCandidate, probeLmStudio, probeOllama, type LlmCandidate } from "./llm-detect";

/** What `memsvc setup --llm <choice>` accepts, besides an http(s) URL of an OpenAI-compatible endpoint. */
export const LLM_CHOICES = ["ollama", "lmstudio", ...KEY_PROVIDERS.map((p) => p.id), "claude-cli", "codex-cli", "gemini-cli", "none"] as const;

export class LlmChoiceError extends Error {}

/**
 * The settings one `--llm` choice stands for, found now (a local server must
 * be running; a key must be in the environment or given with --api-key).
 * null for "none": setup then removes the model (recall-only operation).
 */
export async function resolveChoice(
  choice: string,
  opts: { model?: string; apiKey?: string; env: NodeJS.ProcessEnv; cliCandidates: LlmCandidate[] },
): Promise<LlmCandidate | null> {
  const { env, model, apiKey } = opts;
  if (choice === "none") return null;
  if (/^https?:\/\//.test(choice)) {
    const baseURL = choice.replace(/\/+$/, "");
    const chosen = model ?? (await listedModel(baseURL, apiKey));
    if (!chosen) throw new LlmChoiceError(`${baseURL} lists no model: name one with --model`);
    return { id: "url", label: `${baseURL}, model ${chosen}`, llm: { baseURL, model: chosen, ...(apiKey ? { apiKey } : {}) } };
  }
  if (choice === "ollama" || choice === "lmstudio") {
    const found = choice === "ollama" ? await probeOllama(env, model) : await probeLmStudio(env, model);
    if (!found)
      throw new LlmChoiceError(
        choice === "ollama"
          ? "no Ollama answers at its address (OLLAMA_HOST or 127.0.0.1:11434), or it has no chat model installed (`ollama pull qwen2.5`)"
          : "no LM Studio server answers at 127.0.0.1:1234 with a chat model loaded (start its local server)",
      );
    return found;
  }
  const provider = KEY_PROVIDERS.find((p) => p.id === choice);
  if (provider) {
    const found = keyCandidate(provider, apiKey ? { ...env, [provider.keyVar]: apiKey } : env, model);
    if (!found) throw new LlmChoiceError(`${provider.name} needs a key: set ${provider.keyVar} or pass --api-key`);
    return apiKey ? { ...found, keyFrom: "--api-key" } : found;
  }
  const cli = opts.cliCandidates.find((c) => c.id === choice);
  if (cli) return model ? { ...cli, llm: { ...cli.llm, model } } : cli;
  if (choice.endsWith("-cli")) throw new LlmChoiceError(`${choice.replace(/-cli$/, "")} is not on PATH: install its CLI and log in first`);
  throw new LlmChoiceError(`unknown --llm "${choice}": one of ${LLM_CHOICES.join(", ")}, or the http(s) URL of an OpenAI-compatible endpoint`);
}

/** The first model an OpenAI-compatible endpoint lists under /models, if it lists any. */
async function listedModel(baseURL: string, apiKey?: string): Promise<string | null> {
  try {
    const res = await fetch(`${baseURL}/models`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(3000) });
    if (!res.ok) return null;
    const body = (await res.json()) as { data?: { id?: string }[] };
    return body.data?.find((m) => typeof m.id === "string")?.id ?? null;
  } catch {
    return null;
  }
}
