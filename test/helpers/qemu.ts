import { spawn, type Subprocess } from "bun";
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * Runs linux-arm64 programs on this x64 machine through qemu user mode
 * (Debian: qemu-user-static, libc6-arm64-cross, libstdc++6-arm64-cross; the
 * last two are the arm64 C and C++ runtimes the binary and its native addons
 * link against, found under the -L sysroot).
 */
export const QEMU = Bun.which("qemu-aarch64-static") ?? Bun.which("qemu-aarch64");
export const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";

/** Why the arm64 run cannot happen here, or null when it can. */
export function qemuMissing(): string | null {
  if (!QEMU) return "qemu-aarch64-static is not installed (Debian package qemu-user-static)";
  if (!existsSync(join(ARM64_SYSROOT, "lib", "ld-linux-aarch64.so.1"))) return `no arm64 C runtime under ${ARM64_SYSROOT} (Debian package libc6-arm64-cross)`;
  if (!existsSync(join(ARM64_SYSROOT, "lib", "libstdc++.so.6"))) return `no arm64 C++ runtime under ${ARM64_SYSROOT} (Debian package libstdc++6-arm64-cross)`;
  return null;
}

export function underQemu(cmd: string[]): string[] {
  if (!QEMU) throw new Error("qemu is not installed");
  return [QEMU, "-L", ARM64_SYSROOT, ...cmd];
}

export interface TimedServer {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** From spawn to the first /health answer with status 200. */
  startMs: number;
  stderr(): string;
}

/** Starts a server command and waits (polling every 20 ms) for its first /health 200; emulation is slow, so the wait is long. */
export async function startTimed(cmd: string[], env: Record<string, string>, port: number, cwd: string, timeoutMs = 180_000): Promise<TimedServer> {
  const started = performance.now();
  const proc = spawn(cmd, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let err = "";
  void (async () => {
    const reader = proc.stderr.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      err += dec.decode(value);
    }
  })();
  const url = `http://127.0.0.1:${port}`;
  while (performance.now() - started < timeoutMs) {
    if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}: ${err}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return { proc, url, startMs: performance.now() - started, stderr: () => err };
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(20);
  }
  proc.kill("SIGKILL");
  throw new Error(`server did not answer /health within ${timeoutMs} ms: ${err}`);
}
