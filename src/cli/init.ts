import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { homeDir, pathsFor, readConfigFile, writeConfigFile } from "../config";
import { ensurePrivateDir, makePrivate } from "../private-files";
import { parseFlags } from "./args";

export const INIT_HELP = `memsvc init [--force]

Creates the service home ($MEMSVC_HOME, default ~/.memsvc) and config.json
(mode 0600) with a new random bearer token and a stable agentId.
Run again, it keeps the existing token unless --force is given.`;

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Creates home and config if needed; returns what happened. Shared by `init` and `server`. */
export function ensureHome(force = false, env = process.env): { home: string; created: boolean; tokenChanged: boolean; token: string } {
  const home = homeDir(env);
  const paths = pathsFor(home);
  ensurePrivateDir(home, { tighten: true });
  ensurePrivateDir(paths.identity, { tighten: true });
  const existed = existsSync(paths.config);
  const current = readConfigFile(paths.config);
  const keep = !force && typeof current.token === "string" && current.token.length > 0;
  const token = keep ? (current.token as string) : newToken();
  const next = { ...current, token, agentId: typeof current.agentId === "string" && current.agentId ? current.agentId : crypto.randomUUID() };
  if (!existed || !keep || next.agentId !== current.agentId) writeConfigFile(paths.config, next);
  else makePrivate(paths.config);
  return { home, created: !existed, tokenChanged: !keep, token };
}

export async function runInit(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { force: { type: "boolean" } });
  if (values.help) {
    console.log(INIT_HELP);
    return 0;
  }
  const r = ensureHome(values.force === true);
  const paths = pathsFor(r.home);
  if (r.created) console.log(`created ${paths.config} with a new bearer token`);
  else if (r.tokenChanged) console.log(`wrote a new bearer token to ${paths.config} (--force); restart the server to use it`);
  else console.log(`${paths.config} exists; kept its bearer token (use --force for a new one)`);
  console.log(`home: ${r.home}`);
  return 0;
}
