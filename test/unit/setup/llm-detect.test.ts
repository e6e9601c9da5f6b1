import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LlmChoiceError, resolveChoice } from "../../../src/setup/llm-choice";
import { cliCandidates } from "../../../src/setup/llm-cli";
import { findLlms, keyCandidate, KEY_PROVIDERS, liveTest, pickChatModel, probeOllama } from "../../../src/setup/llm-detect";

/**
 * What `memsvc setup` finds, against servers that answer as the real ones
 * document: Ollama's GET /api/tags and LM Studio's GET /v1/models, each with
 * the OpenAI-compatible /v1/chat/completions the live test calls.
 */
function chat(content: string) {
  return Response.json({
    id: "c1",
    object: "chat.completion",
    created: 0,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  });
}

const calls: string[] = [];
const ollama = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    calls.push(`ollama ${req.method} ${url.pathname}`);
    // Ollama's documented /api/tags shape: models[].name (an embedding model first, to be passed over).
    if (url.pathname === "/api/tags")
      return Response.json({
        models: [
          { name: "nomic-embed-text:latest", size: 1 },
          { name: "llama3.2:3b", size: 2 },
          { name: "qwen2.5:7b-instruct", size: 3 },
        ],
      });
    if (url.pathname === "/v1/chat/completions") {
      const body = (await req.json()) as { model: string };
      return chat(body.model === "qwen2.5:7b-instruct" ? '{"ok": true}' : "I am not sure what you mean.");
    }
    return new Response("not found", { status: 404 });
  },
});
const lmstudio = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/v1/models")
      return Response.json({
        object: "list",
        data: [
          { id: "text-embedding-nomic-embed-text-v1.5", object: "model" },
          { id: "mistral-7b-instruct-v0.3", object: "model" },
        ],
      });
    if (url.pathname === "/v1/chat/completions") return chat('```json\n{"ok": true}\n```');
    return new Response("not found", { status: 404 });
  },
});
afterAll(() => {
  ollama.stop(true);
  lmstudio.stop(true);
});
const home = mkdtempSync(join(tmpdir(), "memsvc-llm-detect-"));
const noLocal = { OLLAMA_HOST: "127.0.0.1:1", LM_STUDIO_URL: "http://127.0.0.1:1" };

describe("finding a language model", () => {
  test("chat models are preferred by family; embedding models are never picked", () => {
    expect(pickChatModel(["nomic-embed-text", "llama3.2:3b", "qwen2.5:7b"])).toBe("qwen2.5:7b");
    expect(pickChatModel(["bge-m3", "some-custom-model"])).toBe("some-custom-model");
    expect(pickChatModel(["mxbai-embed-large", "nomic-embed-text"])).toBeNull();
  });

  test("a running Ollama (OLLAMA_HOST without a scheme, as Ollama itself takes it) with a chat model", async () => {
    const found = await probeOllama({ OLLAMA_HOST: `127.0.0.1:${ollama.port}` });
    expect(found).toMatchObject({ id: "ollama", llm: { baseURL: `http://127.0.0.1:${ollama.port}/v1`, model: "qwen2.5:7b-instruct" } });
    expect(await liveTest(found!.llm, home)).toBeNull();
  });

  test("local servers come first, then keys; each candidate only counts once a live call answers", async () => {
    const env = {
      OLLAMA_HOST: `http://0.0.0.0:${ollama.port}`,
      LM_STUDIO_URL: `http://127.0.0.1:${lmstudio.port}`,
      OPENAI_API_KEY: "sk-x",
      ANTHROPIC_API_KEY: "sk-ant-x",
    };
    const found = await findLlms(env);
    expect(found.map((c) => c.id)).toEqual(["ollama", "lmstudio", "openai", "anthropic"]);
    expect(found[1]!.llm.model).toBe("mistral-7b-instruct-v0.3");
    // LM Studio's fenced answer is still JSON; a model that answers prose fails the live test.
    expect(await liveTest(found[1]!.llm, home)).toBeNull();
    const prose = await liveTest({ baseURL: `http://127.0.0.1:${ollama.port}/v1`, model: "llama3.2:3b" }, home);
    expect(prose).toContain("not JSON");
    // Nothing answers on a closed port: a clear reason, not a throw.
    expect(await liveTest({ baseURL: "http://127.0.0.1:1/v1", model: "x" }, home)).toContain("unreachable");
  });

  test("keys: OpenAI honours OPENAI_BASE_URL/OPENAI_MODEL; Anthropic uses its OpenAI-compatible endpoint; the key's variable is named", () => {
    const openai = keyCandidate(KEY_PROVIDERS.find((p) => p.id === "openai")!, {
      OPENAI_API_KEY: "sk-1",
      OPENAI_BASE_URL: "http://proxy.local/v1/",
      OPENAI_MODEL: "gpt-x",
    })!;
    expect(openai).toMatchObject({ keyFrom: "OPENAI_API_KEY", llm: { baseURL: "http://proxy.local/v1", apiKey: "sk-1", model: "gpt-x" } });
    const anthropic = keyCandidate(KEY_PROVIDERS.find((p) => p.id === "anthropic")!, { ANTHROPIC_API_KEY: "sk-ant" })!;
    expect(anthropic.llm.baseURL).toBe("https://api.anthropic.com/v1/");
    expect(keyCandidate(KEY_PROVIDERS.find((p) => p.id === "gemini")!, { GOOGLE_API_KEY: "g" })!.keyFrom).toBe("GOOGLE_API_KEY");
    expect(keyCandidate(KEY_PROVIDERS.find((p) => p.id === "groq")!, {})).toBeNull();
  });

  test("--llm choices: a URL lists its model, a key provider needs its key, a missing local server is a clear error", async () => {
    const url = await resolveChoice(`http://127.0.0.1:${lmstudio.port}/v1`, { env: noLocal, cliCandidates: [] });
    expect(url!.llm).toEqual({ baseURL: `http://127.0.0.1:${lmstudio.port}/v1`, model: "text-embedding-nomic-embed-text-v1.5" });
    const named = await resolveChoice(`http://127.0.0.1:${lmstudio.port}/v1/`, {
      env: noLocal,
      model: "mistral-7b-instruct-v0.3",
      apiKey: "k",
      cliCandidates: [],
    });
    expect(named!.llm).toEqual({ baseURL: `http://127.0.0.1:${lmstudio.port}/v1`, model: "mistral-7b-instruct-v0.3", apiKey: "k" });
    await expect(resolveChoice("openai", { env: {}, cliCandidates: [] })).rejects.toThrow(/set OPENAI_API_KEY or pass --api-key/);
    expect((await resolveChoice("openai", { env: {}, apiKey: "sk-given", cliCandidates: [] }))!.keyFrom).toBe("--api-key");
    await expect(resolveChoice("ollama", { env: noLocal, cliCandidates: [] })).rejects.toThrow(LlmChoiceError);
    await expect(resolveChoice("claude-cli", { env: noLocal, cliCandidates: [] })).rejects.toThrow(/not on PATH/);
    await expect(resolveChoice("gpt5", { env: noLocal, cliCandidates: [] })).rejects.toThrow(/unknown --llm "gpt5"/);
    expect(await resolveChoice("none", { env: noLocal, cliCandidates: [] })).toBeNull();
  });

  test("a harness CLI on PATH is a candidate with its absolute command and the daily cap; the live test runs it headless", async () => {
    const bin = resolve(import.meta.dir, "../../fixtures/harness-cli");
    const record = mkdtempSync(join(tmpdir(), "memsvc-standin-"));
    const env = { PATH: `${bin}:/usr/bin:/bin`, HARNESS_STANDIN_DIR: record };
    const clis = cliCandidates(env);
    expect(clis.map((c) => c.id)).toEqual(["claude-cli", "codex-cli", "gemini-cli"]);
    const claude = await resolveChoice("claude-cli", { env, cliCandidates: clis });
    expect(claude!.llm).toEqual({ provider: "claude-cli", command: join(bin, "claude"), dailyCap: 50 });
    const previous = process.env.HARNESS_STANDIN_DIR;
    process.env.HARNESS_STANDIN_DIR = record;
    try {
      expect(await liveTest(claude!.llm, home)).toBeNull();
    } finally {
      if (previous === undefined) delete process.env.HARNESS_STANDIN_DIR;
      else process.env.HARNESS_STANDIN_DIR = previous;
    }
    expect(readFileSync(join(record, "argv"), "utf8")).toContain("-p");
    expect(readFileSync(join(record, "stdin"), "utf8")).toContain('{"ok": true}');
  });
});
