import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { parse, type ParseError } from "jsonc-parser";
import { installedHooks } from "../../../../src/capture/claude-settings";
import { checkWiring, planWiring } from "../../../../src/setup/harnesses";
import { GEMINI_HOOKS } from "../../../../src/setup/harnesses/gemini";
import { COMMAND, fixture, install, machine, uninstall } from "./harness-fixtures";

const SETTINGS = ".gemini/settings.json";

function parseJsonc(text: string): any {
  const errors: ParseError[] = [];
  const v = parse(text, errors, { allowTrailingComma: false });
  expect(errors).toEqual([]);
  return v;
}

test("install adds Gemini's four hook events and mcpServers.memsvc; the user's comment, hook and remote server stay", () => {
  const m = machine({ [SETTINGS]: "gemini/config/settings.json" });
  install("gemini", m);
  const text = m.read(SETTINGS)!;
  expect(text).toContain("// Gemini CLI user settings (comments are allowed in this file)");
  const doc = parseJsonc(text);
  const original = parseJsonc(fixture("gemini/config/settings.json"));
  expect(doc.hooks.BeforeTool).toEqual(original.hooks.BeforeTool);
  expect(doc.mcpServers.github).toEqual(original.mcpServers.github);
  expect(doc.mcpServers.memsvc).toEqual({ command: "/opt/memsvc/bin/memsvc", args: ["mcp"], env: { MEMSVC_HOME: "/opt/memsvc home" } });
  expect(installedHooks(doc, GEMINI_HOOKS).map((h) => [h.harnessEvent, h.command])).toEqual(
    [
      ["SessionStart", "session-start"],
      ["BeforeAgent", "user-prompt"],
      ["PreCompress", "pre-compact"],
      ["SessionEnd", "session-end"],
    ].map(([ev, hook]) => [ev, `MEMSVC_HOME='/opt/memsvc home' /opt/memsvc/bin/memsvc hook ${hook} --harness gemini`]),
  );
  // Gemini counts hook timeouts in milliseconds.
  expect(doc.hooks.BeforeAgent[0].hooks[0]).toMatchObject({ name: "memsvc-recall", type: "command", timeout: 2000 });
  expect(checkWiring("gemini", { env: m.env })).toMatchObject({ hooks: "ok", mcp: "ok" });
  expect(planWiring("gemini", { command: COMMAND, env: m.env })).toEqual([]);
});

test("uninstall after install restores the file byte for byte", () => {
  const m = machine({ [SETTINGS]: "gemini/config/settings.json" });
  install("gemini", m);
  uninstall("gemini", m);
  expect(m.read(SETTINGS)).toBe(fixture("gemini/config/settings.json"));
});

test("settings changed after install (the theme): uninstall removes only memsvc's hooks and server", () => {
  const m = machine({ [SETTINGS]: "gemini/config/settings.json" });
  install("gemini", m);
  writeFileSync(m.path(SETTINGS), m.read(SETTINGS)!.replace('"theme": "GitHub"', '"theme": "Dracula"'));
  uninstall("gemini", m);
  expect(m.read(SETTINGS)).toBe(fixture("gemini/config/settings.json").replace('"theme": "GitHub"', '"theme": "Dracula"'));
});

test("hooks switched off in the file: the check says so", () => {
  const m = machine({}, [".gemini"]);
  install("gemini", m);
  writeFileSync(m.path(SETTINGS), m.read(SETTINGS)!.replace(/^\{/, '{\n  "hooksConfig": { "enabled": false },'));
  const c = checkWiring("gemini", { env: m.env });
  expect(c.detail).toContain("switched off");
  expect(c.advice).toContain("hooksConfig.enabled");
});
