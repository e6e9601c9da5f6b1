import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { parse } from "smol-toml";
import { checkWiring, parseOurNotify, planWiring, WiringError } from "../../../../src/setup/harnesses";
import { COMMAND, fixture, install, machine, uninstall } from "./harness-fixtures";

const CONFIG = ".codex/config.toml";
const NOTIFY = ["/opt/memsvc/bin/memsvc", "hook", "codex-notify", "--home", "/opt/memsvc home"];

test("install chains the user's own notify, adds [mcp_servers.memsvc] at the end, keeps comments and the other tables; the file is valid TOML", () => {
  const m = machine({ [CONFIG]: "codex/config/config.toml" });
  install("codex", m);
  const text = m.read(CONFIG)!;
  const doc = parse(text) as any;
  expect(doc.notify).toEqual([...NOTIFY, "--then", "/home/dana/bin/codex-notify.sh", "--sound"]);
  expect(parseOurNotify(doc.notify)).toEqual({ home: "/opt/memsvc home", chain: ["/home/dana/bin/codex-notify.sh", "--sound"] });
  expect(doc.mcp_servers.memsvc).toEqual({ command: "/opt/memsvc/bin/memsvc", args: ["mcp"], env: { MEMSVC_HOME: "/opt/memsvc home" } });
  expect(doc.mcp_servers.context7).toEqual({ command: "npx", args: ["-y", "@upstash/context7-mcp"], env: { DEBUG: "0" } });
  expect(doc.model).toBe("gpt-5-codex");
  expect(text).toContain('approval_policy = "on-request"   # ask before leaving the sandbox');
  expect(text).toContain("# Desktop notification when a turn completes; Codex appends the JSON payload.");
  expect(text.trimEnd().endsWith('env = { MEMSVC_HOME = "/opt/memsvc home" }')).toBe(true);
  expect(checkWiring("codex", { env: m.env })).toMatchObject({ hooks: "ok", mcp: "ok" });
  expect(planWiring("codex", { command: COMMAND, env: m.env })).toEqual([]);
  // A new memsvc path keeps the chain it already carries: the user's notify is not chained twice.
  const moved = planWiring("codex", { command: ["/usr/local/bin/memsvc"], env: m.env });
  expect((parse(moved[0]!.after!) as any).notify).toEqual([
    "/usr/local/bin/memsvc",
    "hook",
    "codex-notify",
    "--then",
    "/home/dana/bin/codex-notify.sh",
    "--sound",
  ]);
});

test("uninstall after install restores the file byte for byte, the user's notify included", () => {
  const m = machine({ [CONFIG]: "codex/config/config.toml" });
  install("codex", m);
  uninstall("codex", m);
  expect(m.read(CONFIG)).toBe(fixture("codex/config/config.toml"));
});

test("config changed after install: uninstall puts the user's notify back and removes only memsvc's table", () => {
  const m = machine({ [CONFIG]: "codex/config/config.toml" });
  install("codex", m);
  writeFileSync(m.path(CONFIG), m.read(CONFIG)!.replace('model = "gpt-5-codex-mini"', 'model = "gpt-5-codex-nano"'));
  const changes = uninstall("codex", m);
  expect(changes[0]!.summary.join("\n")).toContain("your own notify (/home/dana/bin/codex-notify.sh --sound) put back");
  expect(m.read(CONFIG)).toBe(fixture("codex/config/config.toml").replace('model = "gpt-5-codex-mini"', 'model = "gpt-5-codex-nano"'));
});

test("a config with only tables gets notify above the first table, and loses it again exactly", () => {
  const m = machine({ [CONFIG]: "codex/config/config-tables-only.toml" });
  install("codex", m);
  const text = m.read(CONFIG)!;
  const doc = parse(text) as any;
  expect(doc.notify).toEqual(NOTIFY);
  expect(doc.tui).toEqual({ notifications: true });
  expect(text.indexOf("notify =")).toBeLessThan(text.indexOf("[tui]"));
  // Edited after install: the surgical path has to undo both edits exactly.
  writeFileSync(m.path(CONFIG), text.replace('"high"', '"medium"'));
  uninstall("codex", m);
  expect(m.read(CONFIG)).toBe(fixture("codex/config/config-tables-only.toml").replace('"high"', '"medium"'));
});

test("no ~/.codex/config.toml: install creates it, uninstall deletes it", () => {
  const m = machine({}, [".codex"]);
  install("codex", m);
  expect((parse(m.read(CONFIG)!) as any).notify).toEqual(NOTIFY);
  uninstall("codex", m);
  expect(existsSync(m.path(CONFIG))).toBe(false);
  expect(existsSync(m.path(".codex"))).toBe(true);
});

test("CODEX_HOME moves the file; invalid TOML and a notify that is not a list are refused", () => {
  const m = machine({ "elsewhere/config.toml": "codex/config/config.toml" });
  const env = { ...m.env, CODEX_HOME: m.path("elsewhere") };
  expect(planWiring("codex", { command: COMMAND, env })[0]!.file).toBe(m.path("elsewhere/config.toml"));
  writeFileSync(m.path("elsewhere/config.toml"), 'model = "x\n');
  expect(() => planWiring("codex", { command: COMMAND, env })).toThrow(WiringError);
  expect(() => planWiring("codex", { command: COMMAND, env })).toThrow(/is not valid TOML at line 1/);
  writeFileSync(m.path("elsewhere/config.toml"), 'notify = "say done"\n');
  expect(() => planWiring("codex", { command: COMMAND, env })).toThrow(/"notify" is not a list of strings/);
});
