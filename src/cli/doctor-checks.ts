import { accessSync, constants, existsSync } from "node:fs";
import { serverFetch } from "../server-client";
import { isLoopbackBind, networkWarnings } from "../net-address";
import { liveServer } from "../runtime-file";
import { isAbsolute } from "node:path";
import { commandParts, installedHooks, SettingsShapeError } from "../capture/claude-settings";
import { loadConfig, type Config } from "../config";
import { backlogSummary, readBacklog } from "../capture/backlog";
import { autostartCheck } from "../setup/service";
import { selfProgram } from "../setup/self-program";
import { VERSION } from "../version";
import { checkWiring, findHarnesses } from "../setup/harnesses";
import { backlogLine } from "./status";
import { claudeSettingsPath, readSettings } from "./hooks";

/**
 * The checks behind `memsvc doctor`. Each talks to the server the way its
 * real user does (status, the hooks, an MCP client) and, when it fails, says
 * what to do. A check whose precondition failed (no server) is "skip".
 */
export type Outcome = "ok" | "warn" | "fail" | "skip";

export interface Check {
  name: string;
  outcome: Outcome;
  detail: string;
  /** What to do about it; empty when nothing needs doing. */
  advice: string;
}

/** Bounds every request doctor makes; a server that takes longer is reported, not waited for. */
const REQUEST_TIMEOUT_MS = 5_000;
/** The language-model probe runs inside the server with its own 15 s bound (LLM_PROBE_TIMEOUT_MS). */
const LLM_TIMEOUT_MS = 20_000;

interface Ctx {
  config: Config;
  env: NodeJS.ProcessEnv;
  health: Record<string, any> | null;
}

async function getJson(url: string, config: Config, timeoutMs = REQUEST_TIMEOUT_MS): Promise<{ status: number; body: any }> {
  const res = await serverFetch(config, url, { signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

function failure(e: unknown): string {
  const err = e as Error;
  return err?.name === "TimeoutError" ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : (err?.message ?? String(e));
}

export async function checkServer(ctx: Ctx): Promise<Check> {
  const { config } = ctx;
  const where = `${config.serverUrl} (address from ${config.serverUrlFrom})`;
  try {
    const { status, body } = await getJson(`${config.serverUrl}/health`, config);
    if (status !== 200 || body?.status !== "ok")
      return {
        name: "server",
        outcome: "fail",
        detail: `${where} answered HTTP ${status}`,
        advice: "something else may be listening there: check MEMSVC_URL / serverUrl / port",
      };
    ctx.health = body;
    const versionNote = body.version === VERSION ? "" : ` (this CLI is ${VERSION})`;
    return {
      name: "server",
      outcome: "ok",
      detail: `${where}: memsvc ${body.version}${versionNote}, ${body.memories} ${body.memories === 1 ? "memory" : "memories"}`,
      advice: "",
    };
  } catch (e) {
    return {
      name: "server",
      outcome: "fail",
      detail: `no server answers at ${where}: ${failure(e)}`,
      advice: `start it with \`memsvc server\` (home ${config.home})${config.serverUrlFrom === "MEMSVC_URL" || config.serverUrlFrom === "config serverUrl" ? `, or fix ${config.serverUrlFrom}` : ""}`,
    };
  }
}

/**
 * What to do about a 401: this machine's config.json token is not one the
 * server takes. On PostgreSQL only members' database tokens authenticate (a
 * server's own config token does not); on SQLite the server's config token does.
 */
const TOKEN_ADVICE =
  "put your member token into this machine's config.json (`memsvc token create` by an admin; on a SQLite server its own token, which `memsvc status` there prints, works too; PostgreSQL takes only database tokens)";

export async function checkEmbedder(ctx: Ctx): Promise<Check> {
  const e = ctx.health?.embedder;
  if (!ctx.health) return { name: "embedder", outcome: "skip", detail: "server not reachable", advice: "" };
  // A search embeds its query: this is the embedder answering, not just being named.
  let answering: string;
  try {
    const started = performance.now();
    const { status, body } = await getJson(`${ctx.config.serverUrl}/search?query=${encodeURIComponent("memsvc doctor probe")}&limit=1`, ctx.config);
    if (status !== 200)
      return {
        name: "embedder",
        outcome: "fail",
        detail: `${e?.description ?? "?"}: a search answered HTTP ${status}: ${body?.error?.message ?? ""}`.trim(),
        advice: status === 401 ? TOKEN_ADVICE : "see the server log",
      };
    answering = `answering (a search took ${Math.round(performance.now() - started)} ms)`;
  } catch (err) {
    return { name: "embedder", outcome: "fail", detail: `${e?.description ?? "?"}: a search failed: ${failure(err)}`, advice: "see the server log" };
  }
  const loading = e?.loading;
  if (e?.kind === "onnx")
    return {
      name: "embedder",
      outcome: "ok",
      detail: `${e.description} [${e.id}], ${answering}${e.reembedding ? "; re-embedding stored memories" : ""}`,
      advice: "",
    };
  const why =
    loading?.state === "downloading"
      ? `; ${loading.model} is downloading since ${loading.since} and takes over when ready`
      : loading?.state === "failed"
        ? `; loading ${loading.model} failed: ${loading.error}`
        : "";
  return {
    name: "embedder",
    outcome: "warn",
    detail: `${e?.description ?? "?"} [${e?.id ?? "?"}], ${answering}${why}`,
    advice:
      loading?.state === "downloading"
        ? "nothing to do: search is keyword-level until the model arrives"
        : `keyword-level search only: put the model files into ${ctx.config.paths.models}/<model>/ (docs/operations.md, Embedder), or start the server without MEMSVC_OFFLINE with the model hub (embedder.hubUrl / HF_ENDPOINT) reachable`,
  };
}

export async function checkLlm(ctx: Ctx): Promise<Check> {
  if (!ctx.health) return { name: "language model", outcome: "skip", detail: "server not reachable", advice: "" };
  if (ctx.health.llm === "not configured")
    return {
      name: "language model",
      outcome: "warn",
      detail: "not configured: the server runs recall-only; capture (/distill) answers 503 and nightly learnings are skipped",
      advice: `\`memsvc setup --llm <ollama|lmstudio|openai|anthropic|claude-cli|...|URL>\` finds, tests and configures one and restarts the server (by hand: llm in ${ctx.config.paths.config})`,
    };
  try {
    const { status, body } = await getJson(`${ctx.config.serverUrl}/health/llm`, ctx.config, LLM_TIMEOUT_MS);
    if (status === 404)
      return {
        name: "language model",
        outcome: "warn",
        detail: `${ctx.health.llm} (this server cannot be asked whether it answers: older than this CLI)`,
        advice: "restart the server with this version",
      };
    if (status !== 200)
      return {
        name: "language model",
        outcome: "fail",
        detail: `${ctx.health.llm}: the probe answered HTTP ${status}: ${body?.error?.message ?? ""}`.trim(),
        advice: status === 401 ? TOKEN_ADVICE : "see the server log",
      };
    if (body.ok) return { name: "language model", outcome: "ok", detail: `${body.llm}, answering (${body.ms} ms)`, advice: "" };
    // The error already says what to do for a harness CLI (log in, install, the daily cap).
    const cli = /^(claude|codex|gemini)-cli /.test(String(body.llm));
    const advice = cli
      ? "fix what the message says (llm.provider, llm.command, llm.dailyCap in config.json), then restart the server"
      : "check that the model server runs and serves this model (llm.baseURL, llm.model, llm.apiKey in config.json or MEMSVC_LLM_* of the server), then restart the server";
    return { name: "language model", outcome: "fail", detail: `${body.llm}: ${body.error}`, advice };
  } catch (e) {
    return { name: "language model", outcome: "fail", detail: `${ctx.health.llm}: the probe failed: ${failure(e)}`, advice: "see the server log" };
  }
}

function programRuns(program: string | null, env: NodeJS.ProcessEnv): boolean {
  if (!program) return false;
  const path = isAbsolute(program) ? program : Bun.which(program, { PATH: env.PATH ?? "" });
  if (!path || !existsSync(path)) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function checkHooks(ctx: Ctx): Promise<Check> {
  const file = claudeSettingsPath(ctx.env);
  let settings: Record<string, any>;
  try {
    settings = readSettings(file);
  } catch (e) {
    if (!(e instanceof SettingsShapeError)) throw e;
    return { name: "claude code hooks", outcome: "fail", detail: e.message, advice: "fix the file by hand, then run `memsvc hooks install`" };
  }
  const hooks = installedHooks(settings);
  const missing = hooks.filter((h) => h.command === null);
  // Someone without Claude Code has nothing to fix here; someone with it and no hooks does.
  const claudeHere = findHarnesses(ctx.env).some((h) => h.id === "claude-code" && h.found);
  if (missing.length === hooks.length && !claudeHere)
    return { name: "claude code hooks", outcome: "skip", detail: "Claude Code is not on this machine (no ~/.claude, no claude on PATH)", advice: "" };
  if (missing.length > 0)
    return {
      name: "claude code hooks",
      outcome: "fail",
      detail: `${missing.length === hooks.length ? "not installed" : `missing ${missing.map((h) => h.harnessEvent).join(", ")}`} in ${file}`,
      advice: "run `memsvc hooks install` (`--dry-run` shows the change first)",
    };
  const broken = hooks.filter((h) => !programRuns(commandParts(h.command!).program, ctx.env));
  if (broken.length > 0)
    return {
      name: "claude code hooks",
      outcome: "fail",
      detail: `the ${broken.map((h) => h.harnessEvent).join(", ")} hook runs "${commandParts(broken[0]!.command!).program}", which is not an executable here`,
      advice: "run `memsvc hooks install` again from the memsvc you use now",
    };
  // Where the hooks will look: the home their command names (or the default one), resolved like the hook resolves it.
  const homes = [...new Set(hooks.map((h) => commandParts(h.command!).home))];
  const problems: string[] = [];
  const reached: string[] = [];
  for (const home of homes) {
    const env = { ...ctx.env, MEMSVC_HOME: home ?? "" };
    let url: string;
    let hookConfig: Config;
    try {
      hookConfig = loadConfig(env);
      url = hookConfig.serverUrl;
    } catch (e) {
      problems.push(`their home ${home ?? "(default)"} has an invalid config: ${(e as Error).message}`);
      continue;
    }
    try {
      const res = await serverFetch(hookConfig, "/health", { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      if (res.ok) reached.push(url);
      else problems.push(`they would call ${url}, which answers HTTP ${res.status}`);
    } catch (e) {
      problems.push(`they would call ${url}${home ? ` (home ${home})` : ""}, where no server answers: ${failure(e)}`);
    }
  }
  if (problems.length > 0)
    return {
      name: "claude code hooks",
      outcome: "fail",
      detail: `installed in ${file}, but ${problems.join("; ")}`,
      advice: ctx.health
        ? "the hooks point at another home than this server: run `memsvc hooks install` with the server's MEMSVC_HOME"
        : "start the server (`memsvc server`)",
    };
  return {
    name: "claude code hooks",
    outcome: "ok",
    detail: `${hooks.length}/${hooks.length} installed in ${file}; they reach ${[...new Set(reached)].join(", ")}`,
    advice: "",
  };
}

const NO_TOOLS = "the agent cannot call memsvc_get / memsvc_search (the recall blocks point at them)";

/**
 * For every harness found on this machine: its hooks (or opencode's plugin)
 * and whether memsvc's MCP server is registered with it. Claude Code's hooks
 * have their own, deeper check (checkHooks); its MCP entry is checked here.
 */
export function checkHarnesses(ctx: Ctx): Check[] {
  const checks: Check[] = [];
  for (const h of findHarnesses(ctx.env).filter((x) => x.found)) {
    const w = checkWiring(h.id, { env: ctx.env });
    const label = h.name.toLowerCase();
    const fix = `run \`memsvc setup\` or \`memsvc hooks install --harness ${h.id}\``;
    if (h.id !== "claude-code") {
      const what = h.id === "opencode" ? "capture plugin" : h.id === "codex" ? "notify (capture)" : "hooks";
      checks.push(
        w.hooks === "ok"
          ? { name: `${label} hooks`, outcome: "ok", detail: `${what} installed: ${w.detail}`, advice: "" }
          : {
              name: `${label} hooks`,
              outcome: "warn",
              detail: `${what} ${w.hooks === "partial" ? "partly installed" : "not installed"}: ${w.detail}`,
              advice: fix,
            },
      );
    }
    checks.push(
      w.mcp === "ok"
        ? { name: `${label} mcp`, outcome: "ok", detail: `memsvc MCP server registered (${h.name} starts \`memsvc mcp\`)`, advice: "" }
        : {
            name: `${label} mcp`,
            outcome: "warn",
            detail:
              w.hooks === "ok"
                ? `hooks are installed but the memsvc MCP server is not registered: ${NO_TOOLS}`
                : `memsvc MCP server not registered: ${w.detail}`,
            advice: fix,
          },
    );
  }
  return checks;
}

/** Reads a response body until `found` matches or the bound passes; for event streams that never end. */
async function readUntil(res: Response, found: RegExp, timeoutMs: number): Promise<string | null> {
  const reader = res.body?.getReader();
  if (!reader) return null;
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const next = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null)]);
      if (!next || next.done) break;
      text += decoder.decode(next.value, { stream: true });
      if (found.test(text)) return text;
    }
    return found.test(text) ? text : null;
  } finally {
    void reader.cancel().catch(() => {});
  }
}

export async function checkSse(ctx: Ctx): Promise<Check> {
  if (!ctx.health) return { name: "mcp /sse", outcome: "skip", detail: "server not reachable", advice: "" };
  const abort = new AbortController();
  try {
    const res = await serverFetch(ctx.config, "/sse", { headers: { accept: "text/event-stream" }, signal: abort.signal });
    if (res.status !== 200)
      return {
        name: "mcp /sse",
        outcome: "fail",
        detail: `GET /sse answered HTTP ${res.status}`,
        advice: res.status === 401 ? TOKEN_ADVICE : "see the server log",
      };
    const text = await readUntil(res, /event: endpoint\s*\ndata: \S+/, REQUEST_TIMEOUT_MS);
    if (!text) return { name: "mcp /sse", outcome: "fail", detail: "GET /sse sent no endpoint event", advice: "see the server log" };
    return { name: "mcp /sse", outcome: "ok", detail: `${ctx.config.serverUrl}/sse opened a session (SSE transport)`, advice: "" };
  } catch (e) {
    return { name: "mcp /sse", outcome: "fail", detail: `GET /sse failed: ${failure(e)}`, advice: "see the server log" };
  } finally {
    abort.abort();
  }
}

export async function checkMcp(ctx: Ctx): Promise<Check> {
  if (!ctx.health) return { name: "mcp /mcp", outcome: "skip", detail: "server not reachable", advice: "" };
  const url = `${ctx.config.serverUrl}/mcp`;
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "memsvc-doctor", version: VERSION } },
  };
  try {
    const res = await serverFetch(ctx.config, url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initialize),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (res.status !== 200)
      return {
        name: "mcp /mcp",
        outcome: "fail",
        detail: `initialize answered HTTP ${res.status}`,
        advice: res.status === 401 ? TOKEN_ADVICE : "see the server log",
      };
    const session = res.headers.get("mcp-session-id");
    const text = await readUntil(res, /"serverInfo"\s*:\s*\{[^}]*"name"/, REQUEST_TIMEOUT_MS);
    // Doctor's session is closed at once rather than left for the session cap to evict.
    if (session)
      await serverFetch(ctx.config, url, { method: "DELETE", headers: { "mcp-session-id": session }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).catch(
        () => {},
      );
    const name = text?.match(/"serverInfo"\s*:\s*\{[^}]*"name"\s*:\s*"([^"]+)"/)?.[1];
    if (!name) return { name: "mcp /mcp", outcome: "fail", detail: "initialize returned no serverInfo", advice: "see the server log" };
    return { name: "mcp /mcp", outcome: "ok", detail: `${url} answered initialize (${name}, Streamable HTTP)`, advice: "" };
  } catch (e) {
    return { name: "mcp /mcp", outcome: "fail", detail: `initialize failed: ${failure(e)}`, advice: "see the server log" };
  }
}

/** Sessions whose capture waits (backlog.ts): the store stops growing without anyone noticing otherwise. */
export function checkBacklog(ctx: Ctx): Check {
  const b = backlogSummary(readBacklog(ctx.config.home));
  if (b.total === 0) return { name: "capture backlog", outcome: "ok", detail: "no session waits", advice: "" };
  const advice = b.noModel
    ? "configure a language model: `memsvc setup --llm <ollama|lmstudio|openai|anthropic|claude-cli|...|URL>`; the waiting sessions are then distilled"
    : b.modelFailed
      ? "see the language model check above; `memsvc capture --backlog` resends them once it answers"
      : "start the server (`memsvc service install` keeps it running); `memsvc capture --backlog` resends them";
  return { name: "capture backlog", outcome: "warn", detail: backlogLine(b), advice };
}

/** Whether something brings the server back after a reboot; without it the hooks go silent and memory stops. */
export async function checkAutostart(ctx: Ctx): Promise<Check> {
  // A server elsewhere (MEMSVC_URL, serverUrl) is started by whoever runs that machine.
  if (ctx.config.serverUrlFrom === "MEMSVC_URL" || ctx.config.serverUrlFrom === "config serverUrl")
    return { name: "autostart", outcome: "skip", detail: `the server is at ${ctx.config.serverUrl}, not on this machine`, advice: "" };
  const r = await autostartCheck({ command: selfProgram(), home: ctx.config.home, env: ctx.env });
  return { name: "autostart", ...r };
}

/**
 * How the server is reached: a non-loopback bind with neither TLS nor a TLS proxy (tls.proxy) sends
 * the token in clear. Judges the running server's bind (server.json) when there is one, else the config's.
 */
export function checkNetwork(ctx: Ctx): Check {
  const { config } = ctx;
  const host = liveServer(config.home)?.host ?? config.host;
  const bypass = config.auth.localhostBypassFrom === "default" ? config.storage === "sqlite" && isLoopbackBind(host) : config.auth.localhostBypass;
  const warnings = networkWarnings({ host, tls: config.tls, auth: { ...config.auth, localhostBypass: bypass } });
  const how = config.tls.cert ? "HTTPS (tls.cert)" : config.tls.proxy ? "HTTP behind a TLS proxy (tls.proxy)" : "plain HTTP";
  const detail = `bound to ${host}, ${how}; localhost bypass ${bypass ? "on" : "off"} (${config.auth.localhostBypassFrom === "default" ? "default" : config.auth.localhostBypassFrom})`;
  if (warnings.length === 0) return { name: "network", outcome: "ok", detail, advice: "" };
  return {
    name: "network",
    outcome: "warn",
    detail: `${detail}: ${warnings.join("; ")}`,
    advice:
      config.tls.cert || config.tls.proxy
        ? ""
        : "set tls.cert and tls.key in config.json (see docs/security.md), or tls.proxy: true when a TLS-terminating proxy is in front",
  };
}

export async function runChecks(config: Config, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const ctx: Ctx = { config, env, health: null };
  const server = await checkServer(ctx);
  // The rest only read the server; run them side by side.
  const [embedder, llm, hooks, sse, mcp, autostart] = await Promise.all([
    checkEmbedder(ctx),
    checkLlm(ctx),
    checkHooks(ctx),
    checkSse(ctx),
    checkMcp(ctx),
    checkAutostart(ctx),
  ]);
  return [server, checkNetwork(ctx), embedder!, llm!, hooks!, ...checkHarnesses(ctx), sse!, mcp!, autostart!, checkBacklog(ctx)];
}
