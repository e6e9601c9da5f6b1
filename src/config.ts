import { chmodSync, existsSync, renameSync, writeFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { isAbsolute, join } from "node:path";
import { ConfigError } from "./errors";
import { parseJsonText } from "./json-file";
import { ensurePrivateDir } from "./private-files";
import { NotUtf8Error, readUtf8File } from "./utf8";
import { isLoopbackBind } from "./net-address";
import { clientUrl, liveServer } from "./runtime-file";
import { AUDIT_RETENTION_DAYS } from "./core/audit/tuning";

export type IdentityMode = "global" | "override" | "off";

export interface Config {
  readonly home: string;
  readonly token: string | null;
  readonly host: string;
  readonly port: number;
  readonly identityClients: readonly string[];
  readonly identityAgents: Readonly<Record<string, IdentityMode>>;
  readonly memoryInstructions: boolean;
  readonly displayName: string | null;
  readonly orgName: string | null;
  readonly planLabel: string | null;
  readonly agentId: string | null;
  readonly sourceAgent: string;
  readonly sourceDomain: string | null;
  /** Where client commands (status, capture, hook, doctor) find the server. */
  readonly serverUrl: string;
  /** Which rule chose serverUrl (see resolveServerUrl). */
  readonly serverUrlFrom: ServerUrlSource;
  /**
   * provider "openai": any OpenAI-compatible endpoint (baseURL + model). The
   * "*-cli" providers run an agent harness's own headless mode (its user's
   * subscription, no API key): `command` (absolute; else found on PATH at use
   * time), `model` optional, at most `dailyCap` calls per local day.
   */
  readonly llm: {
    readonly provider: LlmProvider;
    readonly baseURL: string | null;
    readonly apiKey: string | null;
    readonly model: string | null;
    readonly command: string | null;
    readonly dailyCap: number;
    readonly timeoutMs: number;
    readonly contextChars: number;
  };
  /** hubUrl: where a missing model is downloaded from (null: transformers.js's default, https://huggingface.co/). */
  readonly embedder: { readonly model: string; readonly hubUrl: string | null };
  readonly nightly: { readonly enabled: boolean; readonly schedule: string; readonly maxModelCalls: number };
  /** keepEvidence: keep a bounded excerpt of the segment per anchored memory, for the nightly re-check (README: Capture and hooks). */
  readonly distill: { readonly keepEvidence: boolean };
  /** The recall block's token budget (per harness when the request names one) and its receipts. */
  readonly recall: RecallConfig;
  /** retentionDays: audit log entries older than this are pruned (docs/security.md). */
  readonly audit: { readonly retentionDays: number };
  readonly offline: boolean;
  /** Which engine holds the data: one embedded SQLite file (the default) or PostgreSQL with pgvector. */
  readonly storage: StorageEngine;
  /** The PostgreSQL connection (storage "postgres"); url is null under sqlite. */
  readonly database: DatabaseConfig;
  /** Who may skip the token, and how often a caller may ask (docs/security.md). */
  readonly auth: AuthConfig;
  /** Native TLS for the server (cert, key), the CA clients trust for it (ca), or a TLS proxy in front (proxy). */
  readonly tls: TlsConfig;
  readonly paths: Paths;
}

export interface AuthConfig {
  /**
   * Loopback callers (socket peer 127.0.0.1 / ::1) need no token. Resolved:
   * auth.localhostBypass or MEMSVC_LOCALHOST_BYPASS when set, else on only for
   * SQLite on a loopback bind. A reverse proxy on the same host connects from
   * 127.0.0.1, so on a server others reach the bypass would let anyone in.
   */
  readonly localhostBypass: boolean;
  readonly localhostBypassFrom: "config" | "MEMSVC_LOCALHOST_BYPASS" | "default";
  /** Requests a minute per token (or per peer address for refused ones); 0 turns the limit off. */
  readonly rateLimitPerMinute: number;
}

export interface TlsConfig {
  /** PEM files, absolute paths; both or neither. The server serves HTTPS only when both are set. */
  readonly cert: string | null;
  readonly key: string | null;
  /** A PEM file of the CA (or the self-signed certificate) clients trust for the server, besides the system roots. */
  readonly ca: string | null;
  /** A TLS-terminating proxy is in front: silences the plain-HTTP warning of a non-loopback bind. */
  readonly proxy: boolean;
}

/** 20 requests a second sustained, bursts of 1,200: far above a person or an agent, well below a flood. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 1200;

export type StorageEngine = "sqlite" | "postgres";

export interface RecallConfig {
  /** Most tokens the injected recall block may take (counted with a real tokenizer). */
  readonly maxTokens: number;
  /** Per-harness budgets (`agent` of /recall-index: claude-code, codex, gemini-cli, opencode, ...). */
  readonly maxTokensByHarness: Readonly<Record<string, number>>;
  /** Whether /recall-index and agent searches leave receipts. */
  readonly receipts: boolean;
  /** Receipts are kept this many days, and at most receiptMax of them. */
  readonly receiptDays: number;
  readonly receiptMax: number;
  /** "redacted": the prompt, secrets redacted, first 500 characters; "hash": only its SHA-256. */
  readonly receiptPrompt: "redacted" | "hash";
}

/**
 * 600 tokens: the block's five lines of ~110-character gists with heading
 * and footer measure 150-300 tokens, so the default never cuts a block the
 * gates let through (bench/recall.ts: evidence-block rate unchanged); it
 * stops a block of long identifiers or non-English text from growing.
 */
export const DEFAULT_RECALL_MAX_TOKENS = 600;
export const DEFAULT_RECEIPT_DAYS = 14;
export const DEFAULT_RECEIPT_MAX = 20_000;

export const LLM_PROVIDERS = ["openai", "claude-cli", "codex-cli", "gemini-cli"] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];
export type HarnessCliProvider = Exclude<LlmProvider, "openai">;
export const isCliProvider = (p: LlmProvider): p is HarnessCliProvider => p !== "openai";

/**
 * Calls a day through a harness CLI. One call is one distilled chunk (with a
 * CLI provider a capture segment of up to 40,000 characters is one chunk), one
 * nightly learnings or re-check call, or one /health/llm probe: 50 covers a
 * heavy day (20-30 captured sessions and the nightly run) while keeping a
 * runaway loop from eating a subscription's allowance.
 */
export const DEFAULT_LLM_DAILY_CAP = 50;
/**
 * The models behind the harness CLIs read 128k+ tokens; 64,000 characters
 * (~16k tokens) leave a 43,700-character chunk: one capture segment (at most
 * 40,000 denoised characters, plus role labels) goes in one call instead of
 * three chunks of 13,700 at the 24,000 default: fewer calls on the subscription.
 */
export const CLI_CONTEXT_CHARS = 64_000;
/** Nightly calls count against the daily cap too: the 40 default would leave captures 10 of 50. */
export const CLI_NIGHTLY_MAX_MODEL_CALLS = 10;

export interface DatabaseConfig {
  /** Holds the password: never log it, use `location`. */
  readonly url: string | null;
  /** The URL with its password replaced by ***, safe for logs, /health, status and errors. */
  readonly location: string | null;
  /** Every table lives in this schema, so several stores can share one database. */
  readonly schema: string;
  /** Most connections this process opens. */
  readonly pool: number;
}

export const DEFAULT_DATABASE_SCHEMA = "memsvc";
export const DEFAULT_DATABASE_POOL = 10;
/** A plain, unquoted PostgreSQL identifier: it is spliced into SQL, so nothing else passes. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface Paths {
  readonly home: string;
  readonly config: string;
  readonly db: string;
  readonly identity: string;
  readonly models: string;
  readonly state: string;
}

export type ServerUrlSource = "MEMSVC_URL" | "config serverUrl" | "server.json" | "config port" | "default";

export const DEFAULT_PORT = 8787;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_EMBED_MODEL = "Xenova/bge-small-en-v1.5";

export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MEMSVC_HOME && env.MEMSVC_HOME.length > 0 ? env.MEMSVC_HOME : join(homedir(), ".memsvc");
}

export function pathsFor(home: string): Paths {
  return {
    home,
    config: join(home, "config.json"),
    db: join(home, "memsvc.db"),
    identity: join(home, "identity"),
    models: join(home, "models"),
    state: join(home, "state"),
  };
}

type Kind =
  | "string"
  | "boolean"
  | "port"
  | "posint"
  | "count"
  | "stringList"
  | "modes"
  | "object"
  | "url"
  | "storage"
  | "pgurl"
  | "identifier"
  | "llmProvider"
  | "absPath"
  | "budgets"
  | "promptMode";
// Every key config.json may hold, with its shape; anything else is a typo and is refused.
const SCHEMA: Record<string, Kind> = {
  token: "string",
  host: "string",
  port: "port",
  identityClients: "stringList",
  identityAgents: "modes",
  memoryInstructions: "boolean",
  displayName: "string",
  orgName: "string",
  planLabel: "string",
  agentId: "string",
  sourceAgent: "string",
  sourceDomain: "string",
  serverUrl: "url",
  llm: "object",
  embedder: "object",
  nightly: "object",
  distill: "object",
  recall: "object",
  audit: "object",
  storage: "storage",
  database_url: "pgurl",
  database_schema: "identifier",
  database_pool: "posint",
  auth: "object",
  tls: "object",
};
const NESTED: Record<string, Record<string, Kind>> = {
  llm: {
    provider: "llmProvider",
    baseURL: "url",
    apiKey: "string",
    model: "string",
    command: "absPath",
    dailyCap: "posint",
    timeoutMs: "posint",
    contextChars: "posint",
  },
  embedder: { model: "string", hubUrl: "url" },
  nightly: { enabled: "boolean", schedule: "string", maxModelCalls: "posint" },
  distill: { keepEvidence: "boolean" },
  recall: { maxTokens: "posint", maxTokensByHarness: "budgets", receipts: "boolean", receiptDays: "posint", receiptMax: "posint", receiptPrompt: "promptMode" },
  auth: { localhostBypass: "boolean", rateLimitPerMinute: "count" },
  tls: { cert: "absPath", key: "absPath", ca: "absPath", proxy: "boolean" },
  audit: { retentionDays: "posint" },
};

function check(file: string, key: string, kind: Kind, value: unknown): void {
  const bad = (what: string) => new ConfigError(`${file}: key "${key}" ${what}`);
  if (value === null) return; // null means "unset" for every key
  switch (kind) {
    case "string":
      if (typeof value !== "string") throw bad("must be a string");
      return;
    case "url":
      if (typeof value !== "string" || !/^https?:\/\/[^\s]+$/.test(value)) throw bad("must be an http(s) URL");
      return;
    case "boolean":
      if (typeof value !== "boolean") throw bad("must be true or false");
      return;
    case "storage":
      if (value !== "sqlite" && value !== "postgres") throw bad('must be "sqlite" or "postgres"');
      return;
    case "pgurl":
      // The message never repeats the value: it may hold a password.
      if (typeof value !== "string" || !isPostgresUrl(value)) throw bad("must be a postgres:// or postgresql:// URL");
      return;
    case "identifier":
      if (typeof value !== "string" || !SCHEMA_NAME.test(value))
        throw bad("must be a plain schema name (lower-case letters, digits and _, not starting with a digit, at most 63)");
      return;
    case "llmProvider":
      if (typeof value !== "string" || !(LLM_PROVIDERS as readonly string[]).includes(value))
        throw bad(`must be one of ${LLM_PROVIDERS.map((p) => `"${p}"`).join(", ")}`);
      return;
    case "absPath":
      if (typeof value !== "string" || !isAbsolute(value)) throw bad("must be an absolute path");
      return;
    case "promptMode":
      if (value !== "redacted" && value !== "hash") throw bad('must be "redacted" or "hash"');
      return;
    case "budgets":
      if (typeof value !== "object" || Array.isArray(value)) throw bad("must be an object mapping harness names to token budgets");
      for (const [harness, n] of Object.entries(value as object)) {
        if (!/^[a-z0-9][a-z0-9_.-]*$/.test(harness) || harness.length > 64)
          throw new ConfigError(`${file}: key "${key}.${harness}" is not a harness name (lower-case letters, digits, - _ .)`);
        if (!Number.isInteger(n) || (n as number) <= 0) throw new ConfigError(`${file}: key "${key}.${harness}" must be a positive integer (tokens)`);
      }
      return;
    case "port":
      if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 65535) throw bad("must be an integer port (0-65535)");
      return;
    case "posint":
      if (!Number.isInteger(value) || (value as number) <= 0) throw bad("must be a positive integer");
      return;
    case "count":
      if (!Number.isInteger(value) || (value as number) < 0) throw bad("must be a whole number (0 or more)");
      return;
    case "stringList":
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw bad("must be a list of strings");
      return;
    case "modes":
      if (typeof value !== "object" || Array.isArray(value)) throw bad('must be an object mapping agent ids to "global", "override" or "off"');
      for (const [agent, mode] of Object.entries(value as object)) {
        if (!/^[a-z0-9][a-z0-9_-]*$/.test(agent) || agent.length > 64) throw new ConfigError(`${file}: key "${key}.${agent}" is not a valid agent id`);
        if (mode !== "global" && mode !== "override" && mode !== "off")
          throw new ConfigError(`${file}: key "${key}.${agent}" must be "global", "override" or "off"`);
      }
      return;
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) throw bad("must be an object");
      const nested = NESTED[key] ?? {};
      for (const [k, v] of Object.entries(value as object)) {
        const kindOf = nested[k];
        if (!kindOf) throw new ConfigError(`${file}: unknown key "${key}.${k}" (known: ${Object.keys(nested).join(", ")})`);
        check(file, `${key}.${k}`, kindOf, v);
      }
      return;
    }
  }
}

/** Reads and validates config.json; an absent file is an empty config. */
export function readConfigFile(file: string): Record<string, any> {
  if (!existsSync(file)) return {};
  let raw: unknown;
  try {
    raw = parseJsonText(readUtf8File(file));
  } catch (e) {
    // NotUtf8Error names the file itself; a parse error is "line L, column C: what".
    throw new ConfigError(e instanceof NotUtf8Error ? e.message : `${file}: not valid JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ConfigError(`${file}: must hold a JSON object`);
  for (const [key, value] of Object.entries(raw)) {
    const kind = SCHEMA[key];
    if (!kind) throw new ConfigError(`${file}: unknown key "${key}" (known: ${Object.keys(SCHEMA).join(", ")})`);
    check(file, key, kind, value);
  }
  return raw as Record<string, any>;
}

export interface Overrides {
  host?: string;
  port?: number;
  databaseUrl?: string;
}

/** defaults <- config.json <- environment <- command-line flags. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: Overrides = {}): Config {
  const home = homeDir(env);
  const paths = pathsFor(home);
  const file = readConfigFile(paths.config);
  const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);
  const envOr = (name: string, fallback: string | null) => (env[name] !== undefined && env[name] !== "" ? env[name]! : fallback);
  const port = flags.port ?? file.port ?? DEFAULT_PORT;
  const host = flags.host ?? str(file.host) ?? DEFAULT_HOST;
  const provider = llmProvider(file, envOr("MEMSVC_LLM_PROVIDER", null));
  const server = resolveServerUrl(
    home,
    envOr("MEMSVC_URL", null),
    str(file.serverUrl),
    host,
    port,
    flags.port !== undefined || file.port !== undefined || flags.host !== undefined || str(file.host) !== null,
    typeof file.tls?.cert === "string",
  );
  const config: Omit<Config, "auth" | "tls"> = {
    home,
    token: str(file.token),
    host,
    port,
    identityClients: file.identityClients ?? ["claude-code"],
    identityAgents: file.identityAgents ?? {},
    memoryInstructions: file.memoryInstructions ?? true,
    displayName: str(file.displayName),
    orgName: str(file.orgName),
    planLabel: str(file.planLabel),
    agentId: str(file.agentId),
    sourceAgent: str(file.sourceAgent) ?? hostname(),
    sourceDomain: str(file.sourceDomain),
    serverUrl: server.url,
    serverUrlFrom: server.from,
    llm: {
      provider,
      baseURL: envOr("MEMSVC_LLM_BASE_URL", str(file.llm?.baseURL)),
      apiKey: envOr("MEMSVC_LLM_API_KEY", str(file.llm?.apiKey)),
      model: envOr("MEMSVC_LLM_MODEL", str(file.llm?.model)),
      command: str(file.llm?.command),
      dailyCap: file.llm?.dailyCap ?? DEFAULT_LLM_DAILY_CAP,
      timeoutMs: file.llm?.timeoutMs ?? 120_000,
      contextChars: file.llm?.contextChars ?? (isCliProvider(provider) ? CLI_CONTEXT_CHARS : 24_000),
    },
    // HF_ENDPOINT is the variable Hugging Face's own tools read for a mirror.
    embedder: { model: str(file.embedder?.model) ?? DEFAULT_EMBED_MODEL, hubUrl: envOr("HF_ENDPOINT", str(file.embedder?.hubUrl)) },
    nightly: {
      enabled: file.nightly?.enabled ?? true,
      schedule: str(file.nightly?.schedule) ?? "30 3 * * *",
      maxModelCalls: file.nightly?.maxModelCalls ?? (isCliProvider(provider) ? CLI_NIGHTLY_MAX_MODEL_CALLS : 40),
    },
    distill: { keepEvidence: file.distill?.keepEvidence ?? true },
    recall: {
      maxTokens: file.recall?.maxTokens ?? DEFAULT_RECALL_MAX_TOKENS,
      maxTokensByHarness: file.recall?.maxTokensByHarness ?? {},
      receipts: file.recall?.receipts ?? true,
      receiptDays: file.recall?.receiptDays ?? DEFAULT_RECEIPT_DAYS,
      receiptMax: file.recall?.receiptMax ?? DEFAULT_RECEIPT_MAX,
      receiptPrompt: file.recall?.receiptPrompt ?? "redacted",
    },
    audit: { retentionDays: file.audit?.retentionDays ?? AUDIT_RETENTION_DAYS },
    offline: env.MEMSVC_OFFLINE === "1" || env.MEMSVC_OFFLINE === "true",
    ...storageConfig(paths.config, file, env, flags),
    paths,
  };
  const withNet: Config = { ...config, auth: authConfig(file, env, config.storage, host), tls: tlsConfig(paths.config, file) };
  return Object.freeze(withNet);
}

/** auth.localhostBypass: MEMSVC_LOCALHOST_BYPASS over the config key over "SQLite on a loopback bind". */
function authConfig(json: Record<string, any>, env: NodeJS.ProcessEnv, storage: StorageEngine, host: string): AuthConfig {
  const rateLimitPerMinute: number = json.auth?.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  const fromEnv = env.MEMSVC_LOCALHOST_BYPASS;
  if (fromEnv !== undefined && fromEnv !== "") {
    const on = ["1", "true", "on"].includes(fromEnv.toLowerCase());
    if (!on && !["0", "false", "off"].includes(fromEnv.toLowerCase()))
      throw new ConfigError(`MEMSVC_LOCALHOST_BYPASS must be 1 or 0 (true/false), got "${fromEnv}"`);
    return { localhostBypass: on, localhostBypassFrom: "MEMSVC_LOCALHOST_BYPASS", rateLimitPerMinute };
  }
  if (typeof json.auth?.localhostBypass === "boolean") return { localhostBypass: json.auth.localhostBypass, localhostBypassFrom: "config", rateLimitPerMinute };
  return { localhostBypass: storage === "sqlite" && isLoopbackBind(host), localhostBypassFrom: "default", rateLimitPerMinute };
}

function tlsConfig(file: string, json: Record<string, any>): TlsConfig {
  const tls = json.tls ?? {};
  const cert: string | null = tls.cert ?? null;
  const key: string | null = tls.key ?? null;
  if ((cert === null) !== (key === null)) throw new ConfigError(`${file}: "tls.cert" and "tls.key" go together: set both (HTTPS) or neither (plain HTTP)`);
  return { cert, key, ca: tls.ca ?? null, proxy: tls.proxy === true };
}

/** MEMSVC_LLM_PROVIDER over llm.provider over "openai"; the variable is checked here (the file's key was checked on read). */
function llmProvider(json: Record<string, any>, fromEnv: string | null): LlmProvider {
  if (fromEnv !== null && !(LLM_PROVIDERS as readonly string[]).includes(fromEnv)) {
    throw new ConfigError(`MEMSVC_LLM_PROVIDER must be one of ${LLM_PROVIDERS.join(", ")}, got "${fromEnv}"`);
  }
  return (fromEnv ?? json.llm?.provider ?? "openai") as LlmProvider;
}

function isPostgresUrl(value: string): boolean {
  if (!/^postgres(ql)?:\/\/\S+$/.test(value)) return false;
  try {
    return new URL(value).hostname.length > 0;
  } catch {
    return false;
  }
}

/** `url` with its password (and any password= parameter) replaced by ***. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    for (const key of [...u.searchParams.keys()]) if (/pass/i.test(key)) u.searchParams.set(key, "***");
    return u.toString();
  } catch {
    return "(unparseable database URL)";
  }
}

/** storage, database_url, database_schema, database_pool: config.json <- env <- flags, checked together. */
function storageConfig(
  file: string,
  json: Record<string, any>,
  env: NodeJS.ProcessEnv,
  flags: Overrides,
): { storage: StorageEngine; database: DatabaseConfig } {
  const fromEnv = (name: string) => (env[name] !== undefined && env[name] !== "" ? env[name]! : undefined);
  const storage = fromEnv("MEMSVC_STORAGE") ?? json.storage ?? "sqlite";
  if (storage !== "sqlite" && storage !== "postgres") throw new ConfigError(`MEMSVC_STORAGE must be "sqlite" or "postgres", got "${storage}"`);
  const url: string | null = flags.databaseUrl ?? fromEnv("MEMSVC_DATABASE_URL") ?? json.database_url ?? null;
  if (url !== null && !isPostgresUrl(url)) {
    const from =
      flags.databaseUrl !== undefined ? "--database-url" : fromEnv("MEMSVC_DATABASE_URL") !== undefined ? "MEMSVC_DATABASE_URL" : `${file}: key "database_url"`;
    throw new ConfigError(`${from} must be a postgres:// or postgresql:// URL`);
  }
  const schema: string = fromEnv("MEMSVC_DATABASE_SCHEMA") ?? json.database_schema ?? DEFAULT_DATABASE_SCHEMA;
  if (!SCHEMA_NAME.test(schema))
    throw new ConfigError(
      `MEMSVC_DATABASE_SCHEMA must be a plain schema name (lower-case letters, digits and _, not starting with a digit, at most 63), got "${schema}"`,
    );
  const poolText = fromEnv("MEMSVC_DATABASE_POOL");
  if (poolText !== undefined && !/^[1-9]\d{0,3}$/.test(poolText)) throw new ConfigError(`MEMSVC_DATABASE_POOL must be a positive integer, got "${poolText}"`);
  const pool = poolText !== undefined ? Number(poolText) : (json.database_pool ?? DEFAULT_DATABASE_POOL);
  if (storage === "postgres" && url === null) {
    throw new ConfigError(
      `storage is "postgres" but no database URL is set: set MEMSVC_DATABASE_URL, database_url in ${file}, or memsvc server --database-url`,
    );
  }
  return { storage, database: { url, location: url === null ? null : redactDatabaseUrl(url), schema, pool } };
}

/**
 * Where a client finds the server, first match wins: MEMSVC_URL; `serverUrl`
 * in config.json (an explicit choice, e.g. a server on another machine); the
 * runtime file of a live local server (it knows the port actually bound,
 * whatever flag started it); `host`/`port` from config.json; the default.
 */
export function resolveServerUrl(
  home: string,
  envUrl: string | null,
  configUrl: string | null,
  host: string,
  port: number,
  configured: boolean,
  tls = false,
): { url: string; from: ServerUrlSource } {
  if (envUrl) return { url: envUrl.replace(/\/+$/, ""), from: "MEMSVC_URL" };
  if (configUrl) return { url: configUrl.replace(/\/+$/, ""), from: "config serverUrl" };
  const live = liveServer(home);
  if (live) return { url: live.url, from: "server.json" };
  return { url: clientUrl(host, port, tls), from: configured ? "config port" : "default" };
}

/** Writes config.json atomically with mode 0600 (it holds the bearer token). */
export function writeConfigFile(file: string, data: Record<string, unknown>): void {
  ensurePrivateDir(join(file, ".."));
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
}
