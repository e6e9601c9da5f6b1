import { startProcess, type Running } from "./process";
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

export type TimedServer = Running;

/** Starts a server command and waits for its first /health 200; emulation is slow, so the wait is long. */
export function startTimed(cmd: string[], env: Record<string, string>, port: number, cwd: string, timeoutMs = 180_000): Promise<TimedServer> {
  return startProcess(cmd, env, port, cwd, timeoutMs);
}
