import { spawn } from "node:child_process";
import { healthAnswers } from "../server-client";
import { openSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";
import { liveServer, processAlive } from "../runtime-file";

/**
 * Starting, restarting and waiting for this home's server, for `memsvc
 * setup`. The server reads config.json once at start, so a new `llm` needs a
 * restart; the service manager (or a detached start) brings it back.
 */

/** The URL of this home's server once its /health answers, or null after `timeoutMs`. */
export async function waitForServer(home: string, timeoutMs: number): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const live = liveServer(home);
    if (live) {
      if (await healthAnswers(home, live.url, 2000)) return live.url;
    }
    await Bun.sleep(150);
  }
  return null;
}

/**
 * Stops the running server (SIGTERM: it finishes in-flight writes) and starts
 * it again through the service if one is installed, else detached.
 */
export async function restartServer(home: string, say: (line: string) => void, start: () => Promise<void>): Promise<void> {
  const live = liveServer(home);
  if (!live) return start();
  say(`restarting the server (pid ${live.pid}) so it uses the new language model`);
  try {
    process.kill(live.pid, "SIGTERM");
  } catch {
    /* gone already */
  }
  const deadline = Date.now() + 20_000;
  while (processAlive(live.pid) && Date.now() < deadline) await Bun.sleep(100);
  if (processAlive(live.pid)) {
    say(`the server (pid ${live.pid}) did not stop within 20 s; restart it yourself to use the new model`);
    return;
  }
  await start();
}

/** `memsvc capture --backlog` detached, logging to <home>/state/capture.log; returns the log's path. */
export function spawnBacklogCapture(home: string, env: NodeJS.ProcessEnv): string {
  const dir = join(home, "state");
  ensurePrivateDir(dir);
  const log = join(dir, "capture.log");
  const out = openSync(log, "a", PRIVATE_FILE_MODE);
  makePrivate(log);
  const main = Bun.main;
  const self = main.startsWith("/$bunfs") || main.startsWith("B:/~BUN") ? [] : [main];
  const child = spawn(process.execPath, [...self, "capture", "--backlog"], { detached: true, stdio: ["ignore", out, out], env: { ...env, MEMSVC_HOME: home } });
  child.unref();
  return log;
}
