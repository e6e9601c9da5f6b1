import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePrivate, PRIVATE_FILE_MODE } from "./private-files";

/**
 * `<home>/server.json`: where the running server listens, so client commands
 * (status, capture, hook, doctor) find a server started with `--port` or a
 * config `port` without the user exporting MEMSVC_URL. Written after the
 * socket is bound (so `--port 0` records the real port), removed on a clean
 * shutdown; a file left by a crash is recognised by its dead pid and ignored.
 */
export interface RuntimeInfo {
  pid: number;
  host: string;
  port: number;
  url: string;
  version: string;
  started_at: string;
  /** Serves HTTPS (config tls.cert/tls.key): url is https://. */
  tls?: boolean;
  /** Started by a service manager (`memsvc server --service`): `memsvc service uninstall` stops it. */
  service?: boolean;
}

export const RUNTIME_FILE = "server.json";

export function runtimeFile(home: string): string {
  return join(home, RUNTIME_FILE);
}

/** The URL a local client uses for a server bound to host:port (a wildcard bind is reached on loopback). */
export function clientUrl(host: string, port: number, tls = false): string {
  const h = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return `${tls ? "https" : "http"}://${h}:${port}`;
}

export function writeRuntimeFile(home: string, info: Omit<RuntimeInfo, "url">): RuntimeInfo {
  const full: RuntimeInfo = { ...info, url: clientUrl(info.host, info.port, info.tls === true) };
  const file = runtimeFile(home);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(full, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  makePrivate(temp);
  renameSync(temp, file);
  return full;
}

/** Removes the file only while it still names this process: a newer server's file stays. */
export function removeRuntimeFile(home: string, pid = process.pid): void {
  const info = readRuntimeFile(home);
  if (info && info.pid === pid) rmSync(runtimeFile(home), { force: true });
}

/** The file's content, or null when absent or not in the expected shape (a hand edit is not fatal). */
export function readRuntimeFile(home: string): RuntimeInfo | null {
  const file = runtimeFile(home);
  if (!existsSync(file)) return null;
  try {
    const raw = JSON.parse(readFileSync(file, "utf8"));
    if (
      !Number.isInteger(raw?.pid) ||
      raw.pid <= 0 ||
      !Number.isInteger(raw.port) ||
      typeof raw.host !== "string" ||
      typeof raw.url !== "string" ||
      !/^https?:\/\//.test(raw.url)
    )
      return null;
    return raw as RuntimeInfo;
  } catch {
    return null;
  }
}

/** The runtime file of a server whose process is still alive, else null. */
export function liveServer(home: string): RuntimeInfo | null {
  const info = readRuntimeFile(home);
  return info && processAlive(info.pid) ? info : null;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: a process with that id exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
