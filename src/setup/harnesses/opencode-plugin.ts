import type { Invocation } from "./types";

/** First line of the plugin file: how uninstall and doctor know the file is memsvc's. */
export const PLUGIN_MARKER = "// memsvc capture plugin for opencode";

/**
 * The global plugin memsvc writes to ~/.config/opencode/plugins/memsvc.js.
 * On `session.idle` (the agent finished a turn) it starts `memsvc capture
 * --harness opencode` detached, one at a time: capture reads only messages
 * not shipped before, so a skipped idle is caught up by the next one.
 *
 * One default export serves both plugin APIs: OpenCode 1.x loads
 * `{ id, server }` (server returns hooks; `event` sees every bus event),
 * OpenCode 2.x loads `{ id, setup }` (setup subscribes through ctx.event).
 * No imports beyond node:child_process, so it needs no package.json.
 */
export function pluginSource(inv: Invocation): string {
  const argv = [...inv.program, "capture", "--harness", "opencode"];
  return `${PLUGIN_MARKER}: written by \`memsvc hooks install\`, removed by \`memsvc hooks uninstall\`. Edits here are overwritten.
import { spawn } from "node:child_process";

const ARGV = ${JSON.stringify(argv)};
const ENV = ${JSON.stringify(inv.env)};
let running = false;

function capture() {
  if (running) return;
  running = true;
  try {
    const child = spawn(ARGV[0], ARGV.slice(1), { detached: true, stdio: "ignore", env: { ...process.env, ...ENV } });
    const done = () => { running = false; };
    child.once("exit", done);
    child.once("error", done);
    child.unref();
  } catch {
    running = false;
  }
}

const idle = (event) => event?.type === "session.idle" || (event?.type === "session.status" && event?.properties?.status?.type === "idle");

export default {
  id: "memsvc",
  server: async () => ({
    event: async ({ event }) => {
      if (idle(event)) capture();
    },
  }),
  setup(ctx) {
    const stop = ctx?.event?.subscribe?.("session.idle", () => capture());
    return typeof stop === "function" ? stop : undefined;
  },
};
`;
}
