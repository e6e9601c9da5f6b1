/**
 * Runs writeSections in its own process with node:fs renameSync failing (or
 * the process killing itself) at the Nth rename, to reach the in-process
 * rollback path a real EIO would take. fs is patched before the module is
 * imported, so only this process sees it.
 *
 * usage: bun rename-fault.ts <dir> <fail-at> [kill-at]
 * prints "ok" or "error: <message>"
 */
const fs = require("node:fs") as typeof import("node:fs");
const [dir, failAt, killAt] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 0)];
const real = fs.renameSync;
let calls = 0;
fs.renameSync = ((from: string, to: string) => {
  calls++;
  if (calls === killAt) process.kill(process.pid, "SIGKILL");
  if (calls === failAt) throw Object.assign(new Error("EIO: i/o error, rename (simulated)"), { code: "EIO" });
  return real(from, to);
}) as typeof fs.renameSync;
const { writeSections } = await import("../../src/core/identity/write");
try {
  writeSections(dir, dir, [
    ["alpha", "new alpha"],
    ["beta", "new beta"],
    ["delta", "new delta"],
    ["gamma", "new gamma"],
  ]);
  console.log("ok");
} catch (e) {
  console.log(`error: ${(e as Error).message}`);
}
export {};
