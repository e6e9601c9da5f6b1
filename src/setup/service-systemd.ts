import { posix } from "node:path";
import type { ServiceContext, PlatformPlan } from "./service-context";

/**
 * Linux: a systemd user unit. Quoting follows systemd.service(5), "Command
 * lines", and systemd.unit(5), "Specifiers": a word with spaces goes in
 * double quotes with C-style escapes (\\ and \"), `%` is a specifier
 * everywhere and is written `%%`, and `$` starts a variable in Exec lines
 * and is written `$$` there (Environment= does not expand variables).
 */
export const SYSTEMD_UNIT = "memsvc.service";

/**
 * The unit is 0644, not 0600: systemd reads it as the user either way, and
 * logs "is marked world-inaccessible. This has no effect as configuration
 * data is accessible via APIs without restrictions" on every reload for a
 * file others cannot read (stat_warn_permissions in systemd's fs-util.c).
 * So it holds no secrets: those stay in config.json (0600).
 */
export const SYSTEMD_UNIT_MODE = 0o644;

const SAFE_WORD = /^[\w@+=:,./-]+$/;

function noNewline(value: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`cannot write a line break into a systemd unit: ${JSON.stringify(value)}`);
  return value;
}

/** One ExecStart= word. */
export function systemdExecWord(word: string): string {
  noNewline(word);
  if (word.length > 0 && SAFE_WORD.test(word)) return word;
  return `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$")}"`;
}

/** One Environment= assignment, always quoted (values may hold spaces). */
export function systemdEnvAssignment(name: string, value: string): string {
  noNewline(value);
  return `"${`${name}=${value}`.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%")}"`;
}

/** For Description=, which is not split into words: only specifiers need escaping. */
function systemdText(text: string): string {
  return noNewline(text).replace(/%/g, "%%");
}

export function systemdUnitDir(env: NodeJS.ProcessEnv, userHome: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec ignores a relative XDG_CONFIG_HOME.
  const config = xdg && posix.isAbsolute(xdg) ? xdg : posix.join(userHome, ".config");
  return posix.join(config, "systemd", "user");
}

export function systemdPlan(ctx: ServiceContext): PlatformPlan {
  const file = posix.join(systemdUnitDir(ctx.env, ctx.userHome), SYSTEMD_UNIT);
  const lines = [
    "# Written by `memsvc service install`; `memsvc service uninstall` removes it.",
    "[Unit]",
    `Description=memsvc memory server (home ${systemdText(ctx.home)})`,
    // A port held by another program fails every start: give up after five tries in two minutes.
    "StartLimitIntervalSec=120",
    "StartLimitBurst=5",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${ctx.argv.map(systemdExecWord).join(" ")}`,
    ...Object.entries(ctx.vars).map(([k, v]) => `Environment=${systemdEnvAssignment(k, v)}`),
    // on-failure: a refused second server exits 0 under --service and is not restarted.
    "Restart=on-failure",
    "RestartSec=5",
    // The server's own shutdown gives up after 15 s.
    "TimeoutStopSec=20",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ];
  return {
    manager: "systemd",
    file,
    content: lines.join("\n"),
    mode: SYSTEMD_UNIT_MODE,
    probe: ["systemctl", "--user", "show-environment"],
    commands: [{ argv: ["systemctl", "--user", "daemon-reload"] }, { argv: ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT] }],
    // Re-reading a changed unit does not restart the server it runs: restart does (and starts a stopped one).
    reloadCommands: [
      { argv: ["systemctl", "--user", "daemon-reload"] },
      { argv: ["systemctl", "--user", "enable", SYSTEMD_UNIT] },
      { argv: ["systemctl", "--user", "restart", SYSTEMD_UNIT] },
    ],
    removeCommands: [{ argv: ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT], optional: true }],
    afterRemoveCommands: [{ argv: ["systemctl", "--user", "daemon-reload"], optional: true }],
    statusCommand: ["systemctl", "--user", "is-active", SYSTEMD_UNIT],
    logHint: `journalctl --user -u ${SYSTEMD_UNIT}`,
  };
}
