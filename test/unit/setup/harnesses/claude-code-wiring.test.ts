import { expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { installedHooks } from "../../../../src/capture/claude-settings";
import { checkWiring, planUnwiring, planWiring, WiringError } from "../../../../src/setup/harnesses";
import { setJson } from "../../../../src/setup/harnesses/json-edit";
import { fixture, install, machine, uninstall } from "./harness-fixtures";

const SETTINGS = ".claude/settings.json";
const CLAUDE_JSON = ".claude.json";
const user = () => machine({ [SETTINGS]: "claude-code/config/settings.json", [CLAUDE_JSON]: "claude-code/config/claude.json" });

test("install adds the four hooks and the user-scope MCP server, keeps the user's keys, hooks and 4-space layout; the result is strict JSON", () => {
  const m = user();
  const changes = install("claude-code", m);
  expect(changes.map((c) => c.file)).toEqual([m.path(SETTINGS), m.path(CLAUDE_JSON)]);
  const settings = JSON.parse(m.read(SETTINGS)!);
  const original = JSON.parse(fixture("claude-code/config/settings.json"));
  expect(settings.permissions).toEqual(original.permissions);
  expect(settings.hooks.PreToolUse).toEqual(original.hooks.PreToolUse);
  expect(settings.hooks.SessionStart[0]).toEqual(original.hooks.SessionStart[0]);
  expect(installedHooks(settings).map((h) => h.command)).toEqual(
    ["session-start", "user-prompt", "pre-compact", "session-end"].map((e) => `MEMSVC_HOME='/opt/memsvc home' /opt/memsvc/bin/memsvc hook ${e}`),
  );
  // The user's lines are untouched, byte for byte: only lines were added.
  for (const line of fixture("claude-code/config/settings.json")
    .split("\n")
    .filter((l) => !l.trim().startsWith("]") && !l.trim().startsWith("}")))
    expect(m.read(SETTINGS)!).toContain(line);
  const claude = JSON.parse(m.read(CLAUDE_JSON)!);
  expect(claude.mcpServers.memsvc).toEqual({ type: "stdio", command: "/opt/memsvc/bin/memsvc", args: ["mcp"], env: { MEMSVC_HOME: "/opt/memsvc home" } });
  expect(claude.mcpServers.playwright).toEqual(JSON.parse(fixture("claude-code/config/claude.json")).mcpServers.playwright);
  expect(claude.numStartups).toBe(214);
  expect(checkWiring("claude-code", { env: m.env })).toMatchObject({ hooks: "ok", mcp: "ok" });
  // Idempotent: a second plan finds nothing to do.
  expect(planWiring("claude-code", { command: ["MEMSVC_HOME=/opt/memsvc home", "/opt/memsvc/bin/memsvc"], env: m.env })).toEqual([]);
});

test("uninstall after install restores both files byte for byte", () => {
  const m = user();
  install("claude-code", m);
  const changes = uninstall("claude-code", m);
  expect(changes.every((c) => c.restoreFrom !== undefined)).toBe(true);
  expect(m.read(SETTINGS)).toBe(fixture("claude-code/config/settings.json"));
  expect(m.read(CLAUDE_JSON)).toBe(fixture("claude-code/config/claude.json"));
  expect(planUnwiring("claude-code", { env: m.env, home: m.memsvcHome })).toEqual([]);
});

test("Claude Code rewrote ~/.claude.json after install: uninstall takes out only memsvc's entry and keeps the new values", () => {
  const m = user();
  install("claude-code", m);
  // What Claude Code does on every start: a counter and a project entry change.
  const rewritten = setJson(setJson(m.read(CLAUDE_JSON), ["numStartups"], 215), ["projects", "/home/dana/shop", "lastCost"], 0.52);
  writeFileSync(m.path(CLAUDE_JSON), rewritten);
  const changes = uninstall("claude-code", m);
  expect(changes.find((c) => c.file === m.path(CLAUDE_JSON))!.summary[0]).toContain("changed since memsvc wrote it");
  const expected = setJson(setJson(fixture("claude-code/config/claude.json"), ["numStartups"], 215), ["projects", "/home/dana/shop", "lastCost"], 0.52);
  expect(m.read(CLAUDE_JSON)).toBe(expected);
  expect(m.read(SETTINGS)).toBe(fixture("claude-code/config/settings.json"));
});

test("no files at all: install creates both (0600), uninstall deletes them again", () => {
  const m = machine({}, [".claude"]);
  install("claude-code", m);
  expect(statSync(m.path(SETTINGS)).mode & 0o777).toBe(0o600);
  expect(JSON.parse(m.read(CLAUDE_JSON)!).mcpServers.memsvc.args).toEqual(["mcp"]);
  uninstall("claude-code", m);
  expect(existsSync(m.path(SETTINGS))).toBe(false);
  expect(existsSync(m.path(CLAUDE_JSON))).toBe(false);
  expect(existsSync(m.path(".claude"))).toBe(true);
});

test("an MCP entry named memsvc that points at a remote server is the user's: install keeps it, uninstall leaves it", () => {
  const m = machine({}, [".claude"]);
  const remote = '{\n  "mcpServers": {\n    "memsvc": { "type": "http", "url": "https://memory.example.com/mcp" }\n  }\n}\n';
  writeFileSync(m.path(CLAUDE_JSON), remote);
  const changes = install("claude-code", m);
  expect(changes.map((c) => c.file)).toEqual([m.path(SETTINGS)]);
  expect(m.read(CLAUDE_JSON)).toBe(remote);
  uninstall("claude-code", m);
  expect(m.read(CLAUDE_JSON)).toBe(remote);
});

test("a settings file that is not JSON, or hooks of the wrong shape, are refused with the file named and nothing planned", () => {
  const m = machine({}, [".claude"]);
  writeFileSync(m.path(SETTINGS), '{ "model": "opus", ');
  expect(() => planWiring("claude-code", { command: ["/opt/memsvc"], env: m.env })).toThrow(WiringError);
  expect(() => planWiring("claude-code", { command: ["/opt/memsvc"], env: m.env })).toThrow(/settings\.json is not valid JSON/);
  writeFileSync(m.path(SETTINGS), '{ "hooks": [] }');
  expect(() => planWiring("claude-code", { command: ["/opt/memsvc"], env: m.env })).toThrow(/"hooks" is not an object/);
});

test("settings.json edited after install: uninstall takes out only memsvc's four hooks, the user's groups keep their bytes", () => {
  const m = user();
  install("claude-code", m);
  writeFileSync(m.path(SETTINGS), m.read(SETTINGS)!.replace('"model": "opus"', '"model": "sonnet"'));
  uninstall("claude-code", m);
  expect(m.read(SETTINGS)).toBe(fixture("claude-code/config/settings.json").replace('"model": "opus"', '"model": "sonnet"'));
});
