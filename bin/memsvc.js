#!/usr/bin/env node
// The `memsvc` command of a checkout (npx memsvc, npm link, node_modules/.bin/memsvc).
// The CLI is TypeScript for Bun, and `npm install` brings Bun as a devDependency
// into node_modules, not onto PATH: a `#!/usr/bin/env bun` bin works under npx
// (which puts node_modules/.bin on PATH) but not as npm link's global command.
// So this plain-JavaScript launcher, run by the Node that npm itself needs,
// starts the checkout's own Bun on src/main.ts. Release binaries do not use it.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The checkout's Bun (node_modules/bun, wherever Node's resolution finds it), else a `bun` on PATH. */
function findBun() {
  try {
    const pkg = createRequire(join(root, "package.json")).resolve("bun/package.json");
    return join(dirname(pkg), "bin", "bun.exe"); // the bun package names its binary bun.exe on every OS
  } catch {
    return "bun";
  }
}

const bun = findBun();
const child = spawn(bun, [join(root, "src", "main.ts"), ...process.argv.slice(2)], { stdio: "inherit" });
child.on("error", (error) => {
  console.error(`memsvc: could not start Bun (${bun}): ${error.message}. Run \`npm install\` in ${root}, or install Bun 1.4.`);
  process.exit(1);
});
// Ctrl-C reaches the whole foreground group, Bun included: the launcher only
// waits, so `memsvc server` shuts down once. A signal sent to the launcher's
// own pid (a service manager's stop) is passed on.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what the child saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
