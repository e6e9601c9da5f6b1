import { spawn } from "node:child_process";
import { healthAnswers } from "../server-client";
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createPrivateFile, ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";
import { liveServer, processAlive } from "../runtime-file";

/** How long startDetached waits for the server to answer: a first start creates the database and loads the embedder. */
export const DETACHED_START_TIMEOUT_MS = 30_000;
/** How long stopping waits for a clean shutdown (the server's own limit is 15 s). */
const STOP_TIMEOUT_MS = 20_000;

export function serverLog(home: string): string {
  return join(home, "logs", "server.log");
}

/** <home>/state/detached-server.json: the pid `service install` started, so `service uninstall` stops that server and no other. */
function markerFile(home: string): string {
  return join(home, "state", "detached-server.json");
}

export function detachedPid(home: string): number | null {
  try {
    const pid = JSON.parse(readFileSync(markerFile(home), "utf8"))?.pid;
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function forgetDetached(home: string): void {
  rmSync(markerFile(home), { force: true });
}

/** The log file 0600 in a 0700 folder, created before anything (launchd, a child) appends to it. */
export function prepareLog(home: string): string {
  const file = serverLog(home);
  ensurePrivateDir(join(home, "logs"), { tighten: true });
  createPrivateFile(file);
  return file;
}

function lastLines(file: string, n = 15): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}

function answers(url: string, home: string): Promise<boolean> {
  return healthAnswers(home, url, 2_000);
}

/**
 * Starts `<command> server` in its own session, output appended to
 * <home>/logs/server.log, and returns once server.json names a live server
 * that answers /health. When another server for the home won (it was started
 * meanwhile), that one is returned. Throws with the log's last lines when the
 * child exits first or nothing answers in time (the child is left running then:
 * it may only be slow).
 */
export async function startDetached(opts: {
  command: string[];
  home: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}): Promise<{ pid: number; url: string }> {
  const home = resolve(opts.home);
  const log = prepareLog(home);
  const fd = openSync(log, "a", PRIVATE_FILE_MODE);
  const [program, ...args] = opts.command;
  if (!program) throw new Error("startDetached: empty command");
  let exited: number | null = null;
  let spawnError: Error | null = null;
  const child = spawn(program, [...args, "server"], {
    cwd: home,
    env: { ...opts.env, MEMSVC_HOME: home },
    detached: true,
    stdio: ["ignore", fd, fd],
    windowsHide: true,
  });
  closeSync(fd);
  child.on("exit", (code) => (exited = code ?? 1));
  child.on("error", (e) => (spawnError = e));
  child.unref();
  const until = Date.now() + (opts.timeoutMs ?? DETACHED_START_TIMEOUT_MS);
  while (Date.now() < until) {
    if (spawnError) throw new Error(`could not start ${program}: ${(spawnError as Error).message}`);
    const live = liveServer(home);
    if (live && (live.pid === child.pid || exited !== null) && (await answers(live.url, home))) {
      if (live.pid === child.pid) {
        ensurePrivateDir(join(home, "state"), { tighten: true });
        writeFileSync(markerFile(home), `${JSON.stringify({ pid: child.pid, started_at: new Date().toISOString() })}\n`, { mode: PRIVATE_FILE_MODE });
        makePrivate(markerFile(home));
      }
      return { pid: live.pid, url: live.url };
    }
    if (exited !== null && !live) throw new Error(`the server exited (status ${exited}) before it answered; last lines of ${log}:\n${lastLines(log)}`);
    await Bun.sleep(100);
  }
  throw new Error(
    `the server (pid ${child.pid}) did not answer within ${Math.round((opts.timeoutMs ?? DETACHED_START_TIMEOUT_MS) / 1000)} s; it may still be starting. Last lines of ${log}:\n${lastLines(log)}`,
  );
}

/** Gone, or a zombie nobody reaped yet (a detached server's parent has exited; a container's init may not reap). */
function processGone(pid: number): boolean {
  if (!processAlive(pid)) return true;
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** SIGTERM (a clean shutdown), then waits for the process to go; true when it is gone. */
export async function stopProcess(pid: number, timeoutMs = STOP_TIMEOUT_MS): Promise<boolean> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return processGone(pid);
  }
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (processGone(pid)) return true;
    await Bun.sleep(100);
  }
  return processGone(pid);
}
