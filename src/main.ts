#!/usr/bin/env bun
import { ConfigError } from "./errors";
import { UsageError } from "./cli/args";
import { VERSION } from "./version";

const HELP = `memsvc ${VERSION}: long-term memory service for software agents

Usage: memsvc <command> [options]

Start here:
  setup       one command to a working memory: home, language model, agent
              harnesses (hooks and MCP), autostart, server, doctor

Server commands:
  init        create the service home and config.json with a bearer token
  server      start the service (default 127.0.0.1:8787)
  service     start memsvc at login: install, uninstall, status
  status      ask the running server for its state and print the token
  nightly     run the nightly consolidation now
  export      write all memories, links and identity sections to JSONL (or Markdown)
  import      load an export into a fresh home, or --from claude-mem, claude-code, mem0...
  backup      consistent online copy of the database
  migrate     copy this store into PostgreSQL (batched, resumable)
  history     earlier versions of a memory, and restoring one
  why         what memory gave the agent, and why: receipts as a trace
  feedback    mark a memory wrong, outdated, useful or irrelevant
  token       member tokens: create, list, revoke (kept in the database)
  audit       the audit log: who did what, when, from where

Client commands (run on the agent's machine):
  capture     ship new transcript segments to the server's /distill
  hook        harness hook handler (session start, prompt, compact, end)
  hooks       wire agent harnesses to memsvc (hooks + MCP server), or unwire them
  stale       mark memories whose anchored files changed in this git repository
  doctor      check the whole chain: server, embedder, language model, hooks, MCP
  mcp         stdio MCP server forwarding to the running server (for MCP clients)

Options: --help on any command, --version.
Environment: MEMSVC_HOME (default ~/.memsvc), MEMSVC_URL, MEMSVC_OFFLINE=1,
MEMSVC_LLM_BASE_URL, MEMSVC_LLM_API_KEY, MEMSVC_LLM_MODEL.`;

type Command = (argv: string[]) => Promise<number>;

// Commands load lazily so `memsvc hook` (on every prompt) does not pay for the server's imports.
const COMMANDS: Record<string, () => Promise<Command>> = {
  setup: async () => (await import("./cli/setup")).runSetup,
  init: async () => (await import("./cli/init")).runInit,
  server: async () => (await import("./cli/server")).runServer,
  service: async () => (await import("./cli/service")).runService,
  status: async () => (await import("./cli/status")).runStatus,
  // nightly reads the database before openStore runs, so macOS's SQLite choice must come first.
  nightly: async () => ((await import("./platform/natives")).prepareSqlite(), (await import("./cli/nightly")).runNightlyCommand),
  export: async () => (await import("./cli/portability")).runExport,
  import: async () => (await import("./cli/portability")).runImport,
  backup: async () => (await import("./cli/portability")).runBackup,
  migrate: async () => (await import("./cli/migrate")).runMigrate,
  history: async () => (await import("./cli/history")).runHistory,
  why: async () => (await import("./cli/why")).runWhy,
  feedback: async () => (await import("./cli/feedback")).runFeedback,
  token: async () => (await import("./cli/tokens")).runToken,
  audit: async () => (await import("./cli/tokens")).runAudit,
  capture: async () => (await import("./cli/capture")).runCapture,
  hook: async () => (await import("./cli/hook")).runHook,
  hooks: async () => (await import("./cli/hooks")).runHooks,
  stale: async () => (await import("./cli/stale")).runStale,
  doctor: async () => (await import("./cli/doctor")).runDoctor,
  mcp: async () => (await import("./cli/mcp")).runMcp,
};

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    console.log(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    console.log(VERSION);
    return 0;
  }
  const load = COMMANDS[command];
  if (!load) {
    console.error(`memsvc: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  try {
    return await (await load())(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`memsvc ${command}: ${e.message} (see memsvc ${command} --help)`);
      return 2;
    }
    if (e instanceof ConfigError) {
      console.error(`memsvc ${command}: invalid configuration: ${e.message}`);
      return 2;
    }
    throw e;
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(`memsvc: ${(e as Error).stack ?? e}`);
      process.exit(1);
    },
  );
}
