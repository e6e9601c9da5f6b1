import { posix } from "node:path";
import type { PlatformPlan, ServiceContext } from "./service-context";

/**
 * macOS: a LaunchAgent, per launchd.plist(5): Label, ProgramArguments,
 * EnvironmentVariables, RunAtLoad, KeepAlive { SuccessfulExit = false }
 * (relaunch only after a failure; a refused second server exits 0 under
 * --service, so it is not relaunched in a loop), StandardOutPath and
 * StandardErrorPath. Loaded with `launchctl bootstrap gui/<uid>`; an older
 * launchctl without bootstrap gets `launchctl load -w`.
 */
export const LAUNCHD_LABEL = "dev.memsvc.server";

/** 0644 like any LaunchAgent: launchd refuses group- or world-writable plists; it holds no secrets (those stay in config.json). */
export const LAUNCHD_PLIST_MODE = 0o644;

export function xmlEscape(text: string): string {
  // XML 1.0 cannot carry most control characters at all, escaped or not.
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f]/.test(text)) throw new Error(`cannot write a control character into a property list: ${JSON.stringify(text)}`);
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const str = (s: string) => `<string>${xmlEscape(s)}</string>`;

export function launchdPlan(ctx: ServiceContext): PlatformPlan {
  const file = posix.join(ctx.userHome, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `memsvc service install`; `memsvc service uninstall` removes it. -->",
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  ${str(LAUNCHD_LABEL)}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...ctx.argv.map((a) => `    ${str(a)}`),
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...Object.entries(ctx.vars).flatMap(([k, v]) => [`    <key>${xmlEscape(k)}</key>`, `    ${str(v)}`]),
    "  </dict>",
    "  <key>WorkingDirectory</key>",
    `  ${str(ctx.home)}`,
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>ProcessType</key>",
    `  ${str("Background")}`,
    "  <key>StandardOutPath</key>",
    `  ${str(ctx.logFile)}`,
    "  <key>StandardErrorPath</key>",
    `  ${str(ctx.logFile)}`,
    "</dict>",
    "</plist>",
    "",
  ];
  const domain = `gui/${ctx.uid}`;
  const bootstrap: { argv: string[]; fallback: string[] } = { argv: ["launchctl", "bootstrap", domain, file], fallback: ["launchctl", "load", "-w", file] };
  const bootout = { argv: ["launchctl", "bootout", `${domain}/${LAUNCHD_LABEL}`], fallback: ["launchctl", "unload", "-w", file], optional: true };
  return {
    manager: "launchd",
    file,
    content: lines.join("\n"),
    mode: LAUNCHD_PLIST_MODE,
    probe: ["launchctl", "print", domain],
    commands: [bootstrap],
    reloadCommands: [bootout, bootstrap],
    removeCommands: [bootout],
    afterRemoveCommands: [],
    statusCommand: ["launchctl", "print", `${domain}/${LAUNCHD_LABEL}`],
    logHint: ctx.logFile,
  };
}
