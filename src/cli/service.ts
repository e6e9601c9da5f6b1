import { resolve } from "node:path";
import { homeDir } from "../config";
import { installService, serviceStatus, uninstallService } from "../setup/service";
import { selfProgram } from "../setup/self-program";
import { parseFlags, UsageError } from "./args";

export const SERVICE_HELP = `memsvc service install [--dry-run]
memsvc service uninstall [--dry-run]
memsvc service status

Starts memsvc by itself at login, so the agent hooks always find a server.

  install     macOS: a LaunchAgent (~/Library/LaunchAgents/dev.memsvc.server.plist,
              loaded with launchctl; output in <home>/logs/server.log).
              Linux: a systemd user unit (~/.config/systemd/user/memsvc.service,
              then daemon-reload and enable --now; output in the journal:
              journalctl --user -u memsvc.service).
              Windows: a logon task "memsvc" (schtasks) running a launcher in
              %LOCALAPPDATA%\\memsvc, or the Startup folder where schtasks fails.
              Where the service manager is not usable (a container without a
              user systemd, an SSH session without a GUI login on macOS), the
              file is written anyway and the server is started detached now.
              A server already running for this home is never started twice.
              Run twice, the second run changes nothing.
  uninstall   stops and disables the service, removes its file and stops the
              server install started; the home and its data stay.
  status      whether it is installed, whether the manager is usable, and
              which server runs for this home.
  --dry-run   prints the file and the commands; writes and runs nothing

The service runs this memsvc (the binary, or bun and src/main.ts from a
checkout) as \`server --service\` with MEMSVC_HOME and the MEMSVC_* settings
of this shell; secrets (MEMSVC_LLM_API_KEY, MEMSVC_DATABASE_URL) are not
copied into it: put them in config.json. Exit status: 0 done, 1 failed (or,
for status, no server runs), 2 usage errors.`;

export async function runService(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { "dry-run": { type: "boolean" } }, true);
  if (values.help) {
    console.log(SERVICE_HELP);
    return 0;
  }
  const [action, ...extra] = positionals;
  if (action !== "install" && action !== "uninstall" && action !== "status")
    throw new UsageError(action === undefined ? "say install, uninstall or status" : `unknown action "${action}" (install, uninstall or status)`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const dryRun = values["dry-run"] === true;
  if (dryRun && action === "status") throw new UsageError("--dry-run goes with install or uninstall");
  const opts = { command: selfProgram(), home: resolve(homeDir()), env: process.env, dryRun, log: (line: string) => console.log(line) };
  try {
    if (action === "status") {
      const s = await serviceStatus(opts);
      console.log(s.detail);
      return s.running ? 0 : 1;
    }
    if (action === "uninstall") {
      console.log((await uninstallService(opts)).message);
      return 0;
    }
    const r = await installService(opts);
    console.log(r.message);
    return r.started === "no" && !dryRun ? 1 : 0;
  } catch (e) {
    console.error(`memsvc service ${action}: ${(e as Error).message}`);
    return 1;
  }
}
