import { loadConfig } from "../config";
import { stderrLogger } from "../core/log";
import { downloadModel, ReembedQueue, startupEmbedder } from "../core/embedder-startup";
import { startNightlySchedule } from "../core/nightly";
import { createServices } from "../core/services";
import { warmSearches, warmWordCounts } from "../core/search";
import { warmTokenizer } from "../core/tokenizer";
import { lull } from "../core/slices";
import { storageFailure } from "../store/failures";
import { openStorage } from "../store/open";
import { NIGHTLY_SCHEDULE_DELAY_MS } from "../core/nightly/tuning";
import { createApp } from "../http/app";
import { LISTEN_MAX_REQUEST_BODY_SIZE } from "../http/limits";
import { readTlsPair, watchTlsPair, type TlsPair } from "../http/tls";
import { removeRuntimeFile, runtimeFile, writeRuntimeFile } from "../runtime-file";
import { clearStaleRuntimeFile, lockHolder, LockUnusableError, refusalLine, tryLock } from "../server-lock";
import { homeDir } from "../config";
import { VERSION } from "../version";
import { parseFlags, parsePort, UsageError } from "./args";
import { ensureHome } from "./init";
import { networkWarnings } from "../net-address";
import { counted } from "../core/text";

export const SERVER_HELP = `memsvc server [--port <int>] [--host <address>] [--database-url <postgres url>] [--service]

Starts the memory service (default 127.0.0.1:8787). Creates the service home
and a bearer token on first start when \`memsvc init\` was not run.
Binding to anything but a loopback address exposes it to the network (the
server warns at start): every caller then needs the bearer token, local ones
too (auth.localhostBypass is off unless set). Serve HTTPS with tls.cert and
tls.key in config.json (re-read when the files change), or put a
TLS-terminating proxy in front and set tls.proxy: true.

Environment: MEMSVC_HOME, MEMSVC_LLM_BASE_URL, MEMSVC_LLM_API_KEY,
MEMSVC_LLM_MODEL, MEMSVC_OFFLINE=1 (never download the embedding model),
HF_ENDPOINT (model hub mirror; config embedder.hubUrl).

Storage: one SQLite file in the home (the default), or PostgreSQL with
pgvector for teams: MEMSVC_STORAGE=postgres (config storage) with
MEMSVC_DATABASE_URL (config database_url, or --database-url),
MEMSVC_DATABASE_SCHEMA (default memsvc) and MEMSVC_DATABASE_POOL (default 10).
The server connects and migrates before it listens, and stops with one line
when the database is unreachable or lacks pgvector.

A model that must be downloaded first is fetched in the background: the
server answers at once with the offline fallback embedder and switches (and
re-embeds stored memories) when the model is ready. /health and
\`memsvc status\` say which embedder is active and whether one is loading.

One server per home: a second \`memsvc server\` on a home whose server runs
exits 1 naming it (pid, address) before it touches anything. --service (used
by \`memsvc service install\`) makes that case exit 0, so a service manager
does not restart a refused server over and over.`;

export async function runServer(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    port: { type: "string", short: "p" },
    host: { type: "string" },
    "database-url": { type: "string" },
    service: { type: "boolean" },
  });
  if (values.help) {
    console.log(SERVER_HELP);
    return 0;
  }
  const port = parsePort(values.port);
  if (values.host !== undefined && !/^[\w.:\-[\]]+$/.test(values.host)) throw new UsageError(`--host must be an address or host name, got "${values.host}"`);
  const log = stderrLogger(process.env.MEMSVC_LOG === "debug" ? "debug" : "info");
  // The lock comes before anything touches the home: two first starts must not both write a token.
  const home = homeDir();
  let lock: ReturnType<typeof tryLock>;
  try {
    lock = tryLock(home);
  } catch (e) {
    if (!(e instanceof LockUnusableError)) throw e;
    console.error(`memsvc server: ${e.message}`);
    return 1;
  }
  if (lock === null) {
    console.error(`memsvc server: ${refusalLine(home, await lockHolder(home))}`);
    return values.service ? 0 : 1;
  }
  const serverLock = lock;
  if (!lock.held) log("warn", `${lock.note}: a second server for this home would not be refused`);
  if (lock.held) clearStaleRuntimeFile(home);
  const init = ensureHome();
  if (init.created) log("info", `created ${init.home} with a new bearer token (\`memsvc status\` prints it)`);
  const config = loadConfig(process.env, { port, host: values.host, databaseUrl: values["database-url"] });
  let tlsPair: TlsPair | null = null;
  if (config.tls.cert && config.tls.key) {
    try {
      tlsPair = readTlsPair(config.tls.cert, config.tls.key);
    } catch (e) {
      console.error(`memsvc server: ${(e as Error).message}`);
      return 1;
    }
  }
  const embedderOptions = {
    home: config.home,
    model: config.embedder.model,
    offline: config.offline,
    hubUrl: config.embedder.hubUrl ?? undefined,
    log: (line: string) => log("info", line),
  };
  const { embedder, needsDownload } = await startupEmbedder(embedderOptions);
  let services: ReturnType<typeof createServices>;
  try {
    services = createServices(config, openStorage(config, { walCheckpointer: log, ftsReader: log }), { embedder, log });
  } catch (e) {
    // A read-only or full home is the operator's to fix: one clear line, not a stack trace.
    const storage = storageFailure(e);
    if (!storage) throw e;
    console.error(`memsvc server: cannot open ${config.paths.db}: ${storage.message}`);
    return 1;
  }
  try {
    // PostgreSQL connects lazily: connect and migrate now, so a wrong URL or a missing pgvector stops start-up with one line.
    await services.storage.ready();
  } catch (e) {
    await services.close().catch(() => {});
    console.error(`memsvc server: ${(e as Error).message}`);
    return 1;
  }
  const app = createApp(services);
  // Elysia defaults to SO_REUSEPORT, which would let a second server share the port silently.
  const listenOptions = { hostname: config.host, maxRequestBodySize: LISTEN_MAX_REQUEST_BODY_SIZE, idleTimeout: 60, reusePort: false };
  const tlsOption = (pair: TlsPair | null) => (pair ? { tls: { cert: pair.cert, key: pair.key } } : {});
  try {
    app.listen({ ...listenOptions, port: config.port, ...tlsOption(tlsPair) });
  } catch (e) {
    await services.close();
    const msg = (e as Error).message;
    console.error(`memsvc server: cannot listen on ${config.host}:${config.port}: ${/in use/i.test(msg) ? "the port is already in use" : msg}`);
    return 1;
  }
  const bound = app.server!;
  log(
    "info",
    `memsvc ${VERSION} listening on ${tlsPair ? "https" : "http"}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${bound.port} (home ${config.home}, ${services.storage.engine} ${services.storage.location}, embedder ${embedder.id}${tlsPair ? `, certificate ${tlsPair.summary}` : ""})`,
  );
  for (const line of networkWarnings(config)) log("warn", line);
  let stopping = false;
  // Bun.serve's reload() ignores tls (oven-sh/bun#43815): a renewed certificate re-opens the port
  // instead. Requests in flight (SSE streams too) finish on the old socket; the new one binds at once.
  const stopTlsWatch =
    tlsPair && config.tls.cert && config.tls.key
      ? watchTlsPair(
          config.tls.cert,
          config.tls.key,
          tlsPair,
          (next) => {
            if (stopping) return;
            const old = app.server!;
            void old.stop(false);
            try {
              app.listen({ ...listenOptions, port: old.port!, ...tlsOption(next) });
              log("info", `TLS: the certificate files changed; now serving ${next.summary}`);
            } catch (e) {
              log("error", `TLS: could not re-open port ${old.port} with the new certificate: ${(e as Error).message}`);
            }
          },
          (message) => log("warn", `TLS: the certificate files changed but cannot be used (${message}); still serving the previous certificate`),
        )
      : () => {};
  try {
    writeRuntimeFile(config.home, {
      pid: process.pid,
      host: config.host,
      port: bound.port!,
      version: VERSION,
      started_at: new Date().toISOString(),
      ...(tlsPair ? { tls: true } : {}),
      ...(values.service ? { service: true } : {}),
    });
  } catch (e) {
    log("warn", `could not write ${runtimeFile(config.home)} (${(e as Error).message}); clients need MEMSVC_URL or serverUrl to find this server`);
  }
  const abort = new AbortController();
  const reembed = new ReembedQueue(services, abort.signal);
  void reembed.schedule();
  if (needsDownload)
    void downloadModel(services, embedderOptions, reembed, abort.signal).catch((e) =>
      log("error", `embedder: background model load failed: ${(e as Error).message}`),
    );
  const nightly = startNightlySchedule(services, { delayMs: NIGHTLY_SCHEDULE_DELAY_MS });
  // The tokenizer's vocabulary takes ~1 s of this thread to load: at the first lull in traffic, not on a prompt's path.
  void lull(services.traffic)
    .then(() => warmTokenizer())
    .then(
      () => log("debug", "recall: tokenizer loaded"),
      (e) => log("warn", `recall: tokenizer not loaded (${(e as Error).message}); budgets count UTF-8 bytes, an upper bound`),
    );
  // Tracked: shutdown aborts it and waits for the count under way, not for the rest.
  void services
    .track(warmSearches(services, abort.signal).then(async (searches) => ({ searches, ...(await warmWordCounts(services, abort.signal)) })))
    .then((w) =>
      log(
        "debug",
        `search: warmed up with ${counted(w.searches, "search", "searches")}; counted ${counted(w.words, "common word")} of ${counted(w.sampled, "sampled memory", "sampled memories")} in ${w.ms} ms`,
      ),
    )
    .catch((e) => log("warn", `search: warm-up stopped: ${(e as Error).message}`));

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log("info", `${signal}: finishing in-flight writes, then closing the database`);
    abort.abort();
    nightly.stop();
    stopTlsWatch();
    const server = app.server!;
    void server.stop(false);
    const hard = setTimeout(() => {
      log("warn", "shutdown took longer than 15 s; exiting");
      process.exit(1);
    }, 15_000);
    removeRuntimeFile(config.home);
    // What the edges opened (MCP sessions: SSE streams close, /mcp sessions end) before the store closes.
    for (const edge of services.state.edges.values()) await edge.close();
    await services.close();
    serverLock.release();
    clearTimeout(hard);
    void server.stop(true);
    log("info", "stopped cleanly");
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  return await new Promise<number>(() => {});
}

export { isLoopbackBind } from "../net-address";
