import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, type ParseError } from "jsonc-parser";
import { checkWiring, planWiring, pluginSource } from "../../../../src/setup/harnesses";
import { COMMAND, fixture, install, machine, uninstall } from "./harness-fixtures";

const CONFIG = ".config/opencode/opencode.jsonc";
const PLUGIN = ".config/opencode/plugins/memsvc.js";

function parseJsonc(text: string): any {
  const errors: ParseError[] = [];
  const v = parse(text, errors, { allowTrailingComma: true });
  expect(errors).toEqual([]);
  return v;
}

test("install registers mcp.memsvc in the 1.x shape beside the user's servers (comments and trailing commas kept) and writes the capture plugin", () => {
  const m = machine({ [CONFIG]: "opencode/config/opencode.jsonc" });
  install("opencode", m);
  const text = m.read(CONFIG)!;
  expect(text).toContain("// the model I use most");
  const doc = parseJsonc(text);
  expect(doc.mcp.memsvc).toEqual({
    type: "local",
    command: ["/opt/memsvc/bin/memsvc", "mcp"],
    enabled: true,
    environment: { MEMSVC_HOME: "/opt/memsvc home" },
  });
  expect(doc.mcp.everything.enabled).toBe(false);
  expect(m.read(PLUGIN)).toBe(pluginSource({ program: ["/opt/memsvc/bin/memsvc"], env: { MEMSVC_HOME: "/opt/memsvc home" } }));
  expect(checkWiring("opencode", { env: m.env })).toMatchObject({ hooks: "ok", mcp: "ok" });
  expect(planWiring("opencode", { command: COMMAND, env: m.env })).toEqual([]);
});

test("a config already in OpenCode 2's shape (mcp.servers) gets the entry there, without 1.x's enabled flag", () => {
  const m = machine({ [CONFIG]: "opencode/config/opencode-v2.jsonc" });
  install("opencode", m);
  const doc = parseJsonc(m.read(CONFIG)!);
  expect(doc.mcp.servers.memsvc).toEqual({ type: "local", command: ["/opt/memsvc/bin/memsvc", "mcp"], environment: { MEMSVC_HOME: "/opt/memsvc home" } });
  expect(doc.mcp.memsvc).toBeUndefined();
  uninstall("opencode", m);
  expect(m.read(CONFIG)).toBe(fixture("opencode/config/opencode-v2.jsonc"));
});

test("uninstall restores the config byte for byte and removes the plugin file and the plugins folder memsvc made", () => {
  const m = machine({ [CONFIG]: "opencode/config/opencode.jsonc" });
  install("opencode", m);
  uninstall("opencode", m);
  expect(m.read(CONFIG)).toBe(fixture("opencode/config/opencode.jsonc"));
  expect(existsSync(m.path(PLUGIN))).toBe(false);
  expect(existsSync(m.path(".config/opencode/plugins"))).toBe(false);
});

test("config edited after install: uninstall removes only mcp.memsvc", () => {
  const m = machine({ [CONFIG]: "opencode/config/opencode.jsonc" });
  install("opencode", m);
  writeFileSync(m.path(CONFIG), m.read(CONFIG)!.replace("claude-sonnet-4-5", "claude-opus-4-5"));
  uninstall("opencode", m);
  expect(m.read(CONFIG)).toBe(fixture("opencode/config/opencode.jsonc").replace("claude-sonnet-4-5", "claude-opus-4-5"));
});

test("no config yet: a new opencode.json is created and deleted again; a plugins folder the user had stays", () => {
  const m = machine({}, [".config/opencode/plugins"]);
  writeFileSync(m.path(".config/opencode/plugins/theirs.js"), "export default {}\n");
  install("opencode", m);
  expect(parseJsonc(m.read(".config/opencode/opencode.json")!).mcp.memsvc.type).toBe("local");
  uninstall("opencode", m);
  expect(existsSync(m.path(".config/opencode/opencode.json"))).toBe(false);
  expect(existsSync(m.path(PLUGIN))).toBe(false);
  expect(m.read(".config/opencode/plugins/theirs.js")).toBe("export default {}\n");
});

/** A stand-in for memsvc: records its argv and MEMSVC_HOME, one line per run. */
function recorder(dir: string): { program: string; log: string } {
  const log = join(dir, "calls.log");
  const program = join(dir, "memsvc");
  writeFileSync(program, `#!/bin/sh\necho "$MEMSVC_HOME|$*" >> '${log}'\n`);
  chmodSync(program, 0o755);
  return { program, log };
}

async function waitFor(file: string, lines: number): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    if (existsSync(file)) {
      const got = readFileSync(file, "utf8").trim().split("\n");
      if (got.length >= lines) return got;
    }
    await Bun.sleep(10);
  }
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : [];
}

test("the plugin, loaded as OpenCode 1.x (server + event) and 2.x (setup + ctx.event.subscribe) load it, runs memsvc capture --harness opencode on session.idle only", async () => {
  const m = machine();
  mkdirSync(m.path("bin"));
  const { program, log } = recorder(m.path("bin"));
  const file = m.path("memsvc-plugin.js");
  writeFileSync(file, pluginSource({ program: [program], env: { MEMSVC_HOME: "/srv/mem" } }));
  const plugin = (await import(file)).default;
  expect(plugin.id).toBe("memsvc");

  const hooks = await plugin.server({});
  await hooks.event({ event: { type: "message.updated", properties: {} } });
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } });
  expect(await waitFor(log, 1)).toEqual(["/srv/mem|capture --harness opencode"]);

  const subscribed: [string, () => void][] = [];
  const stop = () => {};
  expect(plugin.setup({ event: { subscribe: (name: string, fn: () => void) => (subscribed.push([name, fn]), stop) } })).toBe(stop);
  expect(subscribed.map((s) => s[0])).toEqual(["session.idle"]);
  // One capture at a time: wait until the first has exited before the second idle.
  await Bun.sleep(100);
  subscribed[0]![1]();
  expect(await waitFor(log, 2)).toEqual(["/srv/mem|capture --harness opencode", "/srv/mem|capture --harness opencode"]);
  // A context without an event bus (an older loader) is not an error.
  expect(plugin.setup({})).toBeUndefined();
});
