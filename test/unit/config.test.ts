import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";

function homeWith(config: unknown): string {
  const home = mkdtempSync(join(tmpdir(), "memsvc-cfg-"));
  writeFileSync(join(home, "config.json"), typeof config === "string" ? config : JSON.stringify(config));
  return home;
}

test("defaults, then config.json, then environment, then flags", () => {
  const empty = loadConfig({ MEMSVC_HOME: mkdtempSync(join(tmpdir(), "memsvc-cfg-")) });
  expect(empty).toMatchObject({ host: "127.0.0.1", port: 8787, memoryInstructions: true, token: null, offline: false });
  expect(empty.llm).toMatchObject({ baseURL: null, model: null });
  expect(empty.embedder.model).toBe("Xenova/bge-small-en-v1.5");
  const home = homeWith({ port: 9000, llm: { baseURL: "http://127.0.0.1:11434/v1", model: "qwen" }, displayName: "Ada" });
  const c = loadConfig({ MEMSVC_HOME: home, MEMSVC_LLM_MODEL: "llama3", MEMSVC_OFFLINE: "1" }, { port: 9100 });
  expect(c.port).toBe(9100);
  expect(c.llm).toMatchObject({ baseURL: "http://127.0.0.1:11434/v1", model: "llama3" });
  expect(c.displayName).toBe("Ada");
  expect(c.offline).toBe(true);
  expect(c.paths.db).toBe(join(home, "memsvc.db"));
  expect(c.serverUrl).toBe("http://127.0.0.1:9100");
  expect(Object.isFrozen(c)).toBe(true);
});

test("a malformed config names the file and the key", () => {
  const cases: [unknown, RegExp][] = [
    ["{", /not valid JSON/],
    ["[]", /JSON object/],
    [{ port: 70000 }, /"port"/],
    [{ token: 5 }, /"token"/],
    [{ identityClients: "claude" }, /"identityClients"/],
    [{ llm: { model: "x", temperature: 1 } }, /unknown key "llm.temperature"/],
    [{ nightly: { maxModelCalls: 0 } }, /"nightly.maxModelCalls"/],
    [{ serverUrl: "ftp://x" }, /"serverUrl"/],
    [{ memoryInstructions: "no" }, /"memoryInstructions"/],
  ];
  for (const [content, pattern] of cases) {
    const home = homeWith(content);
    expect(() => loadConfig({ MEMSVC_HOME: home })).toThrow(pattern);
    expect(() => loadConfig({ MEMSVC_HOME: home })).toThrow(join(home, "config.json"));
  }
});
