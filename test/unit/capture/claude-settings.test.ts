import { expect, test } from "bun:test";
import { installedHooks, installHooks, lineDiff, memsvcHookEvent, shellQuote, shellWords, uninstallHooks } from "../../../src/capture/claude-settings";

test("memsvc's hook commands are recognised, other commands that merely mention memsvc are not", () => {
  expect(memsvcHookEvent("memsvc hook session-start")).toBe("session-start");
  expect(memsvcHookEvent("'/Users/Dana Smith/bin/memsvc' hook user-prompt")).toBe("user-prompt");
  expect(memsvcHookEvent("MEMSVC_HOME='/tmp/a b' /opt/memsvc-darwin-arm64 hook pre-compact")).toBe("pre-compact");
  expect(memsvcHookEvent("C:\\\\tools\\\\memsvc.exe hook session-end")).toBe("session-end");
  expect(memsvcHookEvent("/home/d/.bun/bin/bun /home/d/memsvc/src/main.ts hook session-end")).toBe("session-end");
  expect(memsvcHookEvent("echo memsvc hook session-start")).toBeNull();
  expect(memsvcHookEvent("memsvc hook session-start && rm -rf /")).toBeNull();
  expect(memsvcHookEvent("memsvc hook unknown-event")).toBeNull();
  expect(memsvcHookEvent("memsvc capture")).toBeNull();
  expect(memsvcHookEvent(42)).toBeNull();
});

test("quoting round-trips through the word splitter", () => {
  for (const word of ["/usr/bin/memsvc", "/Users/Dana Smith/memsvc", "it's", 'a "b" $c', "C:\\Program Files\\memsvc.exe"]) {
    expect(shellWords(`${shellQuote(word)} hook x`)).toEqual([word, "hook", "x"]);
  }
});

test("install then uninstall is the identity on settings that had no memsvc hooks; a wrong shape is refused", () => {
  const settings = { env: { FOO: "1" }, hooks: { Stop: [{ hooks: [{ type: "command", command: "say done" }] }] } };
  const installed = installHooks(settings, (e) => `/opt/memsvc hook ${e}`);
  expect(installedHooks(installed).every((h) => h.command?.startsWith("/opt/memsvc hook "))).toBe(true);
  expect(installedHooks(settings).every((h) => h.command === null)).toBe(true);
  expect(installHooks(installed, (e) => `/opt/memsvc hook ${e}`)).toEqual(installed);
  expect(uninstallHooks(installed)).toEqual(settings);
  expect(uninstallHooks({})).toEqual({});
  expect(uninstallHooks(installHooks({}, (e) => `memsvc hook ${e}`))).toEqual({});
  expect(() => installHooks({ hooks: [] }, (e) => e)).toThrow(/"hooks" is not an object/);
  expect(() => installHooks({ hooks: { SessionStart: {} } }, (e) => e)).toThrow(/hooks.SessionStart/);
});

test("lineDiff marks added and removed lines with context", () => {
  expect(lineDiff("a\nb\nc", "a\nB\nc")).toBe("  a\n- b\n+ B\n  c");
  expect(lineDiff("", "x")).toBe("+ x");
});
