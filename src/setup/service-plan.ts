import { homedir } from "node:os";
import { posix, win32 } from "node:path";
import type { PlatformPlan, ServiceContext, Step } from "./service-context";
import { launchdPlan } from "./service-launchd";
import { runManager, lastLine } from "./manager-run";
import { systemdPlan } from "./service-systemd";
import { windowsPlan } from "./service-windows";

export interface ServicePlan {
  manager: "launchd" | "systemd" | "windows-task";
  file: string;
  content: string;
  available: boolean;
  commands: string[][];
}

export interface ServiceOptions {
  /** This memsvc's absolute argv without a subcommand (selfProgram()): the service adds `server --service`. */
  command: string[];
  home: string;
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/**
 * Settings the service carries from the installing shell, because a service
 * manager does not read the user's shell profile. Secrets are not among them:
 * unit files and plists are world-readable (see SYSTEMD_UNIT_MODE), so an API
 * key or a database password belongs in config.json (0600).
 */
const CARRIED_VARS = [
  "MEMSVC_OFFLINE",
  "MEMSVC_STORAGE",
  "MEMSVC_DATABASE_SCHEMA",
  "MEMSVC_DATABASE_POOL",
  "MEMSVC_LLM_BASE_URL",
  "MEMSVC_LLM_MODEL",
  "MEMSVC_CACHE_DIR",
  "MEMSVC_SQLITE_LIB",
  "MEMSVC_LOG",
  "HF_ENDPOINT",
];
export const SECRET_VARS: Record<string, string> = { MEMSVC_LLM_API_KEY: "llm.apiKey", MEMSVC_DATABASE_URL: "database_url" };

export interface FullPlan {
  plan: ServicePlan;
  detail: PlatformPlan;
  ctx: ServiceContext;
  platform: NodeJS.Platform;
  /** Why the manager is not usable, when it is not. */
  reason: string | null;
}

function pathFor(platform: NodeJS.Platform) {
  return platform === "win32" ? win32 : posix;
}

export function serviceContext(opts: ServiceOptions, platform: NodeJS.Platform): ServiceContext {
  const path = pathFor(platform);
  const [program] = opts.command;
  if (!program || !path.isAbsolute(program)) throw new Error(`a service needs this memsvc's absolute path, got ${JSON.stringify(opts.command)}`);
  const home = path.resolve(opts.home);
  const vars: Record<string, string> = { MEMSVC_HOME: home };
  for (const k of CARRIED_VARS) {
    const v = opts.env[k];
    if (v !== undefined && v !== "") vars[k] = v;
  }
  const userHome = (platform === "win32" ? opts.env.USERPROFILE : opts.env.HOME) || homedir();
  return {
    argv: [...opts.command, "server", "--service"],
    home,
    vars,
    env: opts.env,
    userHome,
    logFile: path.join(home, "logs", "server.log"),
    uid: process.getuid?.() ?? 0,
  };
}

export function platformPlan(ctx: ServiceContext, platform: NodeJS.Platform, available: boolean): PlatformPlan {
  if (platform === "darwin") return launchdPlan(ctx);
  if (platform === "win32") return windowsPlan(ctx, available);
  if (platform === "linux") return systemdPlan(ctx);
  throw new Error(`no autostart for ${platform}: start \`memsvc server\` from your own init system`);
}

/** Runs the manager's status command; only on the platform it is for (a plan for another OS is never available). */
function probe(detail: PlatformPlan, platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | null {
  if (platform !== process.platform) return `planning for ${platform} on ${process.platform}`;
  const r = runManager(detail.probe, env);
  return r.code === 0 ? null : `\`${detail.probe.join(" ")}\` failed: ${lastLine(r.output)}`;
}

export const argvOf = (steps: Step[]) => steps.map((s) => s.argv);

export function fullPlan(opts: ServiceOptions): FullPlan {
  const platform = opts.platform ?? process.platform;
  const ctx = serviceContext(opts, platform);
  const first = platformPlan(ctx, platform, true);
  const reason = probe(first, platform, opts.env);
  const detail = reason === null ? first : platformPlan(ctx, platform, false);
  return {
    plan: {
      manager: detail.manager,
      file: detail.file,
      content: detail.content,
      available: reason === null,
      commands: reason === null ? argvOf(detail.commands) : [],
    },
    detail,
    ctx,
    platform,
    reason,
  };
}

/** The service file, its content and the manager commands install would run; `available` says whether the manager is usable here. */
export function planService(opts: ServiceOptions): ServicePlan {
  return fullPlan(opts).plan;
}
