import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {}

/** node:util parseArgs with strict checking; unknown flags become a usage error. */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options: { help: { type: "boolean", short: "h" }, ...options }, strict: true, allowPositionals });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be an integer between 0 and 65535, got "${value}"`);
  return Number(value);
}
