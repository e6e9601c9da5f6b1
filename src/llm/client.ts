import type OpenAI from "openai";
import { isCliProvider, type Config } from "../config";
import { redactSecrets } from "../core/secrets";
import { unavailable } from "../errors";
import { createCliClient } from "./cli-client";
import { extractJson } from "./json";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface LlmClient {
  /** "provider model" for logs and /health. */
  readonly label: string;
  /**
   * One chat completion whose reply must contain a JSON value. Throws an
   * `unavailable` AppError saying what went wrong (unreachable, timeout,
   * HTTP error, unparseable reply): callers never get a half answer.
   */
  chatJson(messages: ChatMessage[], opts?: { signal?: AbortSignal; maxTokens?: number }): Promise<unknown>;
}

/**
 * The client library loads on the first call, not with the server: it is
 * ~150 modules (~170 ms of a start from source, measured) and most servers
 * answer many requests before their first distill, or never make one.
 */
let sdk: Promise<typeof OpenAI> | null = null;
const loadSdk = () => (sdk ??= import("openai").then((m) => m.default));

/**
 * The one way to the language model, whichever provider config names; null
 * when none is configured (recall-only operation). `stateDir` (config.paths.state)
 * holds the daily call count of the harness CLI providers.
 */
export function createLlmClient(llm: Config["llm"], stateDir: string): LlmClient | null {
  if (isCliProvider(llm.provider)) return createCliClient(llm, llm.provider, stateDir);
  if (!llm.baseURL || !llm.model) return null;
  let client: OpenAI | null = null;
  const model = llm.model;
  return {
    label: `${llm.baseURL} ${model}`,
    async chatJson(messages, opts = {}) {
      // Last line of defence: every prompt passes here, whatever route built it.
      const outgoing: ChatMessage[] = [];
      for (const m of messages) outgoing.push({ role: m.role, content: (await redactSecrets(m.content)).text });
      let reply: string | null | undefined;
      const Sdk = await loadSdk();
      client ??= new Sdk({ baseURL: llm.baseURL, apiKey: llm.apiKey ?? "not-needed", timeout: llm.timeoutMs, maxRetries: 0 });
      try {
        const res = await client.chat.completions.create(
          { model, messages: outgoing, temperature: 0.2, ...(opts.maxTokens ? { max_tokens: opts.maxTokens } : {}) },
          { signal: opts.signal, timeout: llm.timeoutMs },
        );
        reply = res.choices?.[0]?.message?.content;
      } catch (e) {
        throw unavailable(describeFailure(Sdk, e, llm.baseURL!, llm.timeoutMs));
      }
      if (typeof reply !== "string" || reply.trim() === "") throw unavailable(`the language model at ${llm.baseURL} returned an empty reply`);
      const parsed = extractJson(reply);
      // The snippet goes into an error message and the log: a secret the model echoed must not.
      if (parsed === null)
        throw unavailable(
          `the language model at ${llm.baseURL} answered something that is not JSON: "${(await redactSecrets(reply.slice(0, 120))).text.replace(/\s+/g, " ")}"`,
        );
      return parsed;
    },
  };
}

function describeFailure(OpenAI: typeof import("openai").default, e: unknown, baseURL: string, timeoutMs: number): string {
  if (e instanceof OpenAI.APIConnectionTimeoutError) return `the language model at ${baseURL} did not answer within ${Math.round(timeoutMs / 1000)} s`;
  if (e instanceof OpenAI.APIUserAbortError) return "the request to the language model was cancelled";
  if (e instanceof OpenAI.APIConnectionError) return `the language model at ${baseURL} is unreachable (${(e.cause as Error)?.message ?? e.message})`;
  if (e instanceof OpenAI.APIError) return `the language model at ${baseURL} answered HTTP ${e.status}: ${String(e.message).slice(0, 200)}`;
  return `the language model call failed: ${(e as Error)?.message ?? String(e)}`;
}
