import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
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
    ["{", /not valid JSON: line 1, column 2: expected ',' or '}'/],
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

test("a config.json that is not JSON: the message names file, line and column", () => {
  const cases: [string, string][] = [
    ['{\n  "port": 8787,\n  "host": "127.0.0.1"\n  "token": "abc"\n}\n', "line 4, column 3: expected ',' or '}'"],
    ['{\n  "identityClients": ["claude-code" "codex"]\n}', "line 2, column 37: expected ',' or ']'"],
    ['{\n  "port": 8787,\n}', 'line 3, column 1: expected a "quoted" key (a trailing comma?)'],
    ["{\n  'port': 8787\n}", "line 2, column 3: unexpected character"],
    ['// settings\n{"port": 8787}', "line 1, column 1: comments are not allowed in JSON"],
    ['{"port" 8787}', "line 1, column 9: expected ':' after the key"],
    ["", "empty file (write {} for an empty configuration)"],
  ];
  for (const [content, where] of cases) {
    const home = homeWith(content);
    const file = join(home, "config.json");
    expect(() => loadConfig({ MEMSVC_HOME: home })).toThrow(`${file}: not valid JSON: ${where}`);
  }
});

test("a config.json that is not UTF-8 is refused naming file, line and byte; a UTF-8 BOM is accepted", () => {
  const home = mkdtempSync(join(tmpdir(), "memsvc-cfg-"));
  const file = join(home, "config.json");
  // "Zoë" in Latin-1: the ë is the single byte 0xEB.
  writeFileSync(file, Buffer.concat([Buffer.from('{\n  "port": 8787,\n  "displayName": "Zo'), Buffer.from([0xeb]), Buffer.from('"\n}\n')]));
  expect(() => loadConfig({ MEMSVC_HOME: home })).toThrow(`${file}: not UTF-8 text (line 3: byte 0xEB at offset 38`);
  writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"displayName": "Zoë"}')]));
  expect(loadConfig({ MEMSVC_HOME: home }).displayName).toBe("Zoë");
});

test("client commands find the server: MEMSVC_URL, config serverUrl, a live server.json, config port, default", async () => {
  const { writeRuntimeFile, removeRuntimeFile } = await import("../../src/runtime-file");
  const home = homeWith({ port: 9300 });
  const portOnly = loadConfig({ MEMSVC_HOME: home });
  expect([portOnly.serverUrl, portOnly.serverUrlFrom]).toEqual(["http://127.0.0.1:9300", "config port"]);

  // A live process (this one) started a server on another port: its file wins over the config port.
  writeRuntimeFile(home, { pid: process.pid, host: "0.0.0.0", port: 41234, version: "test", started_at: new Date().toISOString() });
  const live = loadConfig({ MEMSVC_HOME: home });
  expect([live.serverUrl, live.serverUrlFrom]).toEqual(["http://127.0.0.1:41234", "server.json"]);
  expect(loadConfig({ MEMSVC_HOME: home, MEMSVC_URL: "http://10.0.0.5:8787/" }).serverUrl).toBe("http://10.0.0.5:8787");
  writeFileSync(join(home, "config.json"), JSON.stringify({ port: 9300, serverUrl: "http://memory.internal:8787" }));
  expect(loadConfig({ MEMSVC_HOME: home }).serverUrlFrom).toBe("config serverUrl");
  writeFileSync(join(home, "config.json"), JSON.stringify({ port: 9300 }));

  // A crashed server's file (its pid is gone) is ignored.
  const dead = Bun.spawn(["true"]);
  await dead.exited;
  writeRuntimeFile(home, { pid: dead.pid, host: "127.0.0.1", port: 41235, version: "test", started_at: new Date().toISOString() });
  const stale = loadConfig({ MEMSVC_HOME: home });
  expect([stale.serverUrl, stale.serverUrlFrom]).toEqual(["http://127.0.0.1:9300", "config port"]);
  // Only the server that wrote the file removes it.
  removeRuntimeFile(home, process.pid);
  expect(existsSync(join(home, "server.json"))).toBe(true);
  removeRuntimeFile(home, dead.pid);
  expect(existsSync(join(home, "server.json"))).toBe(false);

  const bare = loadConfig({ MEMSVC_HOME: mkdtempSync(join(tmpdir(), "memsvc-cfg-")) });
  expect([bare.serverUrl, bare.serverUrlFrom]).toEqual(["http://127.0.0.1:8787", "default"]);
});
