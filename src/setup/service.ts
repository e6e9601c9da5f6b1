import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { healthAnswers } from "../server-client";
import { dirname } from "node:path";
import { ensurePrivateDir } from "../private-files";
import { liveServer, type RuntimeInfo } from "../runtime-file";
import { detachedPid, forgetDetached, prepareLog, startDetached, stopProcess } from "./detached";
import { lastLine, runManager } from "./manager-run";
import type { PlatformPlan, Step } from "./service-context";
import { fullPlan, platformPlan, SECRET_VARS, type FullPlan, type ServiceOptions } from "./service-plan";
import { windowsCommandLine } from "./service-windows";

export { planService, type ServiceOptions } from "./service-plan";
export { startDetached } from "./detached";

/** After the manager accepted the service, how long install waits to name the server it started. */
const SERVICE_ANSWER_WAIT_MS = 5_000;

export interface InstallResult {
  file: string;
  manager: string;
  managed: boolean;
  started: "service" | "detached" | "already-running" | "no";
  message: string;
}

type Log = (line: string) => void;
type Opts = ServiceOptions & { dryRun?: boolean; log?: Log };

function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** Through a temp name and a rename, so the manager never reads half a file. */
function writeServiceFile(file: string, content: string, mode: number): void {
  ensurePrivateDir(dirname(file));
  const temp = `${file}.memsvc-${process.pid}.tmp`;
  writeFileSync(temp, content, { mode });
  chmodSync(temp, mode);
  renameSync(temp, file);
}

function show(argv: string[], platform: NodeJS.Platform): string {
  return platform === "win32" ? windowsCommandLine(argv) : argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

/** Runs steps in order; the first that fails (after its fallback) stops the rest. Returns the failure, or null. */
function runSteps(steps: Step[], env: NodeJS.ProcessEnv, log: Log, platform: NodeJS.Platform): string | null {
  for (const step of steps) {
    log(`$ ${show(step.argv, platform)}`);
    let r = runManager(step.argv, env);
    if (r.code !== 0 && step.fallback) {
      log(`  failed (${lastLine(r.output)}); trying ${show(step.fallback, platform)}`);
      r = runManager(step.fallback, env);
    }
    if (r.code !== 0) {
      if (step.optional) {
        log(`  (${lastLine(r.output)}; not needed)`);
        continue;
      }
      return `\`${show(step.argv, platform)}\` failed: ${lastLine(r.output)}`;
    }
  }
  return null;
}

function answers(info: RuntimeInfo, home: string): Promise<boolean> {
  return healthAnswers(home, info.url, 2_000);
}

async function answersWithin(info: RuntimeInfo, home: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await answers(info, home)) return true;
    if (Date.now() >= until || liveServer(home)?.pid !== info.pid) return false;
    await Bun.sleep(200);
  }
}

async function waitForServer(home: string, notPid: number | null, ms: number): Promise<RuntimeInfo | null> {
  const until = Date.now() + ms;
  for (;;) {
    const live = liveServer(home);
    if (live && live.pid !== notPid && (await answers(live, home))) return live;
    if (Date.now() >= until) return null;
    await Bun.sleep(100);
  }
}

const describeServer = (s: RuntimeInfo) => `pid ${s.pid}, ${s.url}`;

function secretWarnings(env: NodeJS.ProcessEnv, log: Log): void {
  for (const [name, key] of Object.entries(SECRET_VARS)) {
    if (env[name]) log(`note: ${name} is set here but is not written into the service (its file is readable by others); put ${key} in config.json instead`);
  }
}

/**
 * Installs the autostart for this home and makes sure a server runs: through
 * the service manager when it is usable, else by writing the file anyway and
 * starting the server detached. Run again with the same file, nothing changes.
 */
export async function installService(opts: Opts): Promise<InstallResult> {
  const log = opts.log ?? (() => {});
  const full = fullPlan(opts);
  const { plan, detail, ctx, platform, reason } = full;
  const existing = readText(detail.file);
  const same = existing === detail.content;
  const live = liveServer(ctx.home);
  const base = { file: detail.file, manager: detail.manager };

  if (opts.dryRun) {
    log(same ? `${detail.file} is already up to date` : `would ${existing === null ? "write" : "replace"} ${detail.file} (mode ${detail.mode.toString(8)}):`);
    if (!same) log(detail.content.trimEnd());
    if (reason === null) for (const step of existing === null ? detail.commands : detail.reloadCommands) log(`would run: ${show(step.argv, platform)}`);
    else
      log(
        `${detail.manager} is not usable here (${reason}): would ${live ? `leave the running server alone (${describeServer(live)})` : "start the server detached"}`,
      );
    return { ...base, managed: plan.available, started: "no", message: "dry run: nothing was written or run" };
  }

  secretWarnings(opts.env, log);
  prepareLog(ctx.home);
  if (!same) {
    writeServiceFile(detail.file, detail.content, detail.mode);
    log(`${existing === null ? "wrote" : "replaced"} ${detail.file}`);
  }

  let failure = reason;
  if (reason === null) {
    if (same && runManager(detail.statusCommand, opts.env).code === 0) {
      const note = live ? `; server ${describeServer(live)}` : "";
      return {
        ...base,
        managed: true,
        started: "already-running",
        message: `memsvc's ${detail.manager} service is already installed (${detail.file}) and active${note}; nothing changed`,
      };
    }
    const restarted = live?.service ? live.pid : null;
    failure = runSteps(existing === null ? detail.commands : detail.reloadCommands, opts.env, log, platform);
    if (failure === null) {
      if (live && !live.service) {
        return {
          ...base,
          managed: true,
          started: "already-running",
          message: `installed the ${detail.manager} service (${detail.file}); a server for ${ctx.home} already runs (${describeServer(live)}), started by hand: the service takes over once it stops (at the next login at the latest)`,
        };
      }
      const up = await waitForServer(ctx.home, restarted, SERVICE_ANSWER_WAIT_MS);
      const state = up
        ? `it answers at ${up.url} (pid ${up.pid})`
        : `no server answered within ${SERVICE_ANSWER_WAIT_MS / 1000} s yet: \`memsvc service status\` shows it, ${detail.logHint} says why`;
      return { ...base, managed: true, started: "service", message: `installed the ${detail.manager} service (${detail.file}) and started it; ${state}` };
    }
  }
  return await unmanaged(full, opts.command, failure!, live, log, same);
}

/** The manager is absent or refused: the file stays (it works where the manager runs), the server starts detached. */
async function unmanaged(full: FullPlan, command: string[], why: string, live: RuntimeInfo | null, log: Log, same: boolean): Promise<InstallResult> {
  const { ctx, platform } = full;
  let detail: PlatformPlan = full.detail;
  // Windows: a task that could not be created is replaced by the Startup folder, which needs no manager.
  const fallback = platformPlan(ctx, platform, false);
  if (fallback.file !== detail.file) {
    rmSync(detail.file, { force: true });
    if (readText(fallback.file) !== fallback.content) writeServiceFile(fallback.file, fallback.content, fallback.mode);
    log(`wrote ${fallback.file} instead (runs at the next logon)`);
    detail = fallback;
  }
  const base = { file: detail.file, manager: detail.manager, managed: false };
  const head = `${detail.manager} is not usable here (${why}): ${same ? `${detail.file} was already there` : `wrote ${detail.file} anyway`}; it takes effect where ${detail.manager} runs`;
  if (live)
    return {
      ...base,
      started: "already-running",
      message: `${head}. A server for ${ctx.home} already runs (${describeServer(live)}); not starting another${same ? "; nothing changed" : ""}`,
    };
  try {
    const s = await startDetached({ command, home: ctx.home, env: ctx.env });
    return {
      ...base,
      started: "detached",
      message: `${head}. Started the server detached: ${s.url} (pid ${s.pid}), log ${ctx.logFile}; it will not come back after a reboot by itself`,
    };
  } catch (e) {
    return { ...base, started: "no", message: `${head}. Starting the server detached failed: ${(e as Error).message}` };
  }
}

/** Every file an install may have written for this platform (Windows: the task's launcher or the Startup-folder one). */
function candidateFiles(full: FullPlan): string[] {
  const files = [platformPlan(full.ctx, full.platform, true).file, platformPlan(full.ctx, full.platform, false).file];
  return [...new Set(files)];
}

/**
 * Stops and disables the service through its manager, removes its file and
 * stops a server that `install` started (by the manager or detached); a
 * server started by hand keeps running. The home is left alone.
 */
export async function uninstallService(opts: Opts): Promise<{ removed: string | null; message: string }> {
  const log = opts.log ?? (() => {});
  const full = fullPlan(opts);
  const { detail, ctx, platform, reason } = full;
  const present = candidateFiles(full).filter((f) => existsSync(f));
  const live = liveServer(ctx.home);
  const ours = live && (live.service || live.pid === detachedPid(ctx.home)) ? live : null;
  if (opts.dryRun) {
    if (reason === null && present.length > 0)
      for (const s of [...detail.removeCommands, ...detail.afterRemoveCommands]) log(`would run: ${show(s.argv, platform)}`);
    for (const f of present) log(`would remove ${f}`);
    if (ours) log(`would stop the server it started (${describeServer(ours)})`);
    return { removed: null, message: present.length || ours ? "dry run: nothing was removed or stopped" : "no memsvc service is installed; nothing to do" };
  }
  const notes: string[] = [];
  if (reason === null && present.length > 0) {
    const failure = runSteps(detail.removeCommands, opts.env, log, platform);
    if (failure) notes.push(failure);
  }
  for (const f of present) rmSync(f, { force: true });
  if (reason === null && present.length > 0) runSteps(detail.afterRemoveCommands, opts.env, log, platform);
  // The manager stopped its own server; a detached one (or one the manager could not stop) is stopped here.
  const still = ours ? liveServer(ctx.home) : null;
  if (still && still.pid === ours!.pid) {
    if (await stopProcess(still.pid)) notes.push(`stopped the server it started (pid ${still.pid})`);
    else notes.push(`the server it started (pid ${still.pid}) did not stop within 20 s`);
  } else if (ours) notes.push(`${detail.manager} stopped the server (pid ${ours.pid})`);
  forgetDetached(ctx.home);
  if (live && !ours) notes.push(`the server started by hand (${describeServer(live)}) keeps running`);
  const what = present.length > 0 ? `removed ${present.join(" and ")}` : `no memsvc service file was installed (${detail.file})`;
  return { removed: present[0] ?? null, message: `${[what, ...notes].join("; ")}; ${ctx.home} is left as it was` };
}

export interface ServiceStatus {
  installed: boolean;
  file: string;
  manager: string;
  managerAvailable: boolean;
  running: boolean;
  detail: string;
}

export async function serviceStatus(opts: ServiceOptions): Promise<ServiceStatus> {
  const full = fullPlan(opts);
  const { detail, ctx, reason } = full;
  const file = candidateFiles(full).find((f) => existsSync(f)) ?? detail.file;
  const installed = existsSync(file);
  const live = liveServer(ctx.home);
  // A live process (its pid in server.json) that has just started may answer /health a few seconds late on a busy machine.
  const running = live !== null && (await answersWithin(live, ctx.home, 6_000));
  const lines = [`${installed ? "installed" : "not installed"}: ${file}`];
  if (reason !== null) lines.push(`${detail.manager}: not usable here (${reason})`);
  else if (installed)
    lines.push(`${detail.manager}: ${runManager(detail.statusCommand, opts.env).code === 0 ? "active" : "not active"} (\`${detail.statusCommand.join(" ")}\`)`);
  else lines.push(`${detail.manager}: available`);
  if (live) {
    const by = live.service
      ? "started by the service"
      : live.pid === detachedPid(ctx.home)
        ? "started detached by `memsvc service install`"
        : "started by hand";
    lines.push(`server: ${running ? "answers at" : "does not answer at"} ${live.url} (pid ${live.pid}, ${by})`);
  } else lines.push(`server: none running for ${ctx.home}`);
  // Without the manager, the server install started writes to the home's log.
  lines.push(`log: ${reason === null ? detail.logHint : ctx.logFile}`);
  return { installed, file, manager: detail.manager, managerAvailable: reason === null, running, detail: lines.join("\n") };
}

/** For `memsvc doctor`: does something start memsvc after a reboot? */
export async function autostartCheck(opts: ServiceOptions): Promise<{ outcome: "ok" | "warn"; detail: string; advice: string }> {
  let s: ServiceStatus;
  try {
    s = await serviceStatus(opts);
  } catch (e) {
    return { outcome: "warn", detail: `cannot tell: ${(e as Error).message}`, advice: "start `memsvc server` yourself after each reboot" };
  }
  if (!s.installed)
    return {
      outcome: "warn",
      detail: "nothing starts memsvc after a reboot or logout: the hooks then find no server and memory stops",
      advice: "run `memsvc service install`",
    };
  if (!s.managerAvailable)
    return {
      outcome: "warn",
      detail: `${s.file} is written, but ${s.manager} is not usable here, so nothing starts memsvc after a reboot`,
      advice: "start `memsvc server` after each reboot, or run `memsvc service install` where the service manager runs",
    };
  if (!s.running)
    return {
      outcome: "warn",
      detail: `${s.manager} has memsvc installed (${s.file}) but no server answers`,
      advice: "`memsvc service status` says more; `memsvc service install` starts it again",
    };
  return { outcome: "ok", detail: `${s.manager} starts memsvc at login (${s.file})`, advice: "" };
}
