import { resolve } from "node:path";

/**
 * This memsvc as an argv a service manager can run: the compiled binary, or
 * bun and src/main.ts from a checkout. The same program as the hooks'
 * selfCommand(), without its shell quoting and MEMSVC_HOME prefix (a service
 * sets the home in its own environment).
 */
export function selfProgram(): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs") || main.startsWith("B:/~BUN");
  return compiled ? [process.execPath] : [process.execPath, resolve(main)];
}
