import { DEFAULT_LLM_DAILY_CAP, pathsFor, type Config } from "../config";
import { createLlmClient } from "../llm/client";

/**
 * Where `memsvc setup` looks for a language model, in the order a laptop user
 * most likely wants: a model server already running on this machine (free,
 * private), then an API key the shell already holds. Each candidate becomes
 * config.json's `llm` object only after one live call answers.
 */
export type LlmSettings = Record<string, string | number>;

export interface LlmCandidate {
  /** What `--llm` calls it: ollama, lmstudio, openai, anthropic, ... */
  id: string;
  /** One line for people: what was found and which model. */
  label: string;
  llm: LlmSettings;
  /** Where an API key came from (it is written into config.json: the server started at login does not see the shell). */
  keyFrom?: string;
}

/** OpenAI-compatible endpoints reached with a key from the environment. Models: small, cheap, good at JSON. */
export const KEY_PROVIDERS: readonly { id: string; name: string; keyVar: string; baseURL: string; model: string; altKeyVar?: string }[] = [
  { id: "openai", name: "OpenAI", keyVar: "OPENAI_API_KEY", baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini" },
  // Anthropic's OpenAI SDK compatibility endpoint (docs.anthropic.com, "OpenAI SDK compatibility").
  { id: "anthropic", name: "Anthropic", keyVar: "ANTHROPIC_API_KEY", baseURL: "https://api.anthropic.com/v1/", model: "claude-haiku-4-5" },
  {
    id: "gemini",
    name: "Google Gemini API",
    keyVar: "GEMINI_API_KEY",
    altKeyVar: "GOOGLE_API_KEY",
    baseURL: "https://generativelanguage.googleapis.com/v1beta/openai/",
    model: "gemini-2.5-flash",
  },
  { id: "openrouter", name: "OpenRouter", keyVar: "OPENROUTER_API_KEY", baseURL: "https://openrouter.ai/api/v1", model: "openai/gpt-4o-mini" },
  { id: "groq", name: "Groq", keyVar: "GROQ_API_KEY", baseURL: "https://api.groq.com/openai/v1", model: "llama-3.3-70b-versatile" },
  { id: "mistral", name: "Mistral", keyVar: "MISTRAL_API_KEY", baseURL: "https://api.mistral.ai/v1", model: "mistral-small-latest" },
  { id: "deepseek", name: "DeepSeek", keyVar: "DEEPSEEK_API_KEY", baseURL: "https://api.deepseek.com/v1", model: "deepseek-chat" },
];

/** Local model servers and the address each listens on by default. */
export const LOCAL_SERVERS = {
  ollama: { name: "Ollama", url: "http://127.0.0.1:11434", envVar: "OLLAMA_HOST" },
  lmstudio: { name: "LM Studio", url: "http://127.0.0.1:1234", envVar: "LM_STUDIO_URL" },
} as const;

const PROBE_TIMEOUT_MS = 1500;
/** A live call may load a local model into memory first: that can take a while on a laptop. */
export const LIVE_TEST_TIMEOUT_MS = 60_000;

// Embedding and reranking models cannot answer a chat request.
const NOT_CHAT = /embed|bge-|minilm|nomic|e5-|gte-|rerank|whisper|clip|llava-phi|vision/i;

/** Families that follow a JSON instruction well at laptop sizes, best first; otherwise the first chat model listed. */
const PREFERRED_LOCAL = [/qwen3/i, /qwen2\.5/i, /llama3\.[123]/i, /gemma3/i, /mistral/i, /phi4/i, /gemma2/i, /llama3/i];

export function pickChatModel(names: string[]): string | null {
  const chat = names.filter((n) => !NOT_CHAT.test(n));
  for (const family of PREFERRED_LOCAL) {
    const hit = chat.find((n) => family.test(n));
    if (hit) return hit;
  }
  return chat[0] ?? null;
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<any | null> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}

function localBase(id: keyof typeof LOCAL_SERVERS, env: NodeJS.ProcessEnv): string {
  const fromEnv = env[LOCAL_SERVERS[id].envVar];
  if (!fromEnv) return LOCAL_SERVERS[id].url;
  // OLLAMA_HOST may be "0.0.0.0:11434" or "host:port" without a scheme; a wildcard bind is reached on loopback.
  const withScheme = /^https?:\/\//.test(fromEnv) ? fromEnv : `http://${fromEnv}`;
  return withScheme.replace("0.0.0.0", "127.0.0.1").replace(/\/+$/, "");
}

/** A running Ollama with at least one installed chat model. */
export async function probeOllama(env: NodeJS.ProcessEnv, model?: string): Promise<LlmCandidate | null> {
  const base = localBase("ollama", env);
  const tags = await getJson(`${base}/api/tags`);
  if (!tags || !Array.isArray(tags.models)) return null;
  const names: string[] = tags.models.map((m: any) => String(m?.name ?? m?.model ?? "")).filter(Boolean);
  const pick = model ?? pickChatModel(names);
  if (!pick) return null;
  return { id: "ollama", label: `Ollama at ${base}, model ${pick} (${names.length} installed)`, llm: { baseURL: `${base}/v1`, model: pick } };
}

/** LM Studio's local server with a chat model listed. */
export async function probeLmStudio(env: NodeJS.ProcessEnv, model?: string): Promise<LlmCandidate | null> {
  const base = localBase("lmstudio", env);
  const list = await getJson(`${base}/v1/models`);
  if (!list || !Array.isArray(list.data)) return null;
  const pick = model ?? pickChatModel(list.data.map((m: any) => String(m?.id ?? "")).filter(Boolean));
  if (!pick) return null;
  return { id: "lmstudio", label: `LM Studio at ${base}, model ${pick}`, llm: { baseURL: `${base}/v1`, model: pick } };
}

/** A provider whose key is in the environment. OpenAI honours OPENAI_BASE_URL and OPENAI_MODEL as its SDK does. */
export function keyCandidate(p: (typeof KEY_PROVIDERS)[number], env: NodeJS.ProcessEnv, model?: string): LlmCandidate | null {
  const keyVar = env[p.keyVar] ? p.keyVar : p.altKeyVar && env[p.altKeyVar] ? p.altKeyVar : null;
  if (!keyVar) return null;
  const baseURL = p.id === "openai" && env.OPENAI_BASE_URL ? env.OPENAI_BASE_URL.replace(/\/+$/, "") : p.baseURL;
  const chosen = model ?? (p.id === "openai" && env.OPENAI_MODEL ? env.OPENAI_MODEL : p.model);
  return {
    id: p.id,
    label: `${p.name} (${keyVar}${baseURL !== p.baseURL ? `, ${baseURL}` : ""}), model ${chosen}`,
    llm: { baseURL, apiKey: env[keyVar]!, model: chosen },
    keyFrom: keyVar,
  };
}

/** Every candidate found, best first (local servers, then keys). Probes run side by side. */
export async function findLlms(env: NodeJS.ProcessEnv): Promise<LlmCandidate[]> {
  const [ollama, lmstudio] = await Promise.all([probeOllama(env), probeLmStudio(env)]);
  const keyed = KEY_PROVIDERS.map((p) => keyCandidate(p, env)).filter((c): c is LlmCandidate => c !== null);
  return [ollama, lmstudio, ...keyed].filter((c): c is LlmCandidate => c !== null);
}

/**
 * One real call through the same client the server uses: the model must
 * answer a tiny JSON request. Returns null when it did, else why not.
 */
export async function liveTest(llm: LlmSettings, home: string): Promise<string | null> {
  // The stored settings' own timeout is for long distills; a test call gets its own bound.
  const settings = {
    provider: "openai",
    baseURL: null,
    apiKey: null,
    model: null,
    command: null,
    dailyCap: DEFAULT_LLM_DAILY_CAP,
    contextChars: 24_000,
    ...llm,
    timeoutMs: LIVE_TEST_TIMEOUT_MS,
  } as unknown as Config["llm"];
  const client = createLlmClient(settings, pathsFor(home).state);
  if (!client) return "incomplete settings (a base URL and a model are needed)";
  try {
    const reply = await client.chatJson([{ role: "user", content: 'Reply with exactly this JSON and nothing else: {"ok": true}' }], { maxTokens: 20 });
    return reply && typeof reply === "object" ? null : `it answered ${JSON.stringify(reply).slice(0, 80)} instead of a JSON object`;
  } catch (e) {
    return (e as Error).message;
  }
}
