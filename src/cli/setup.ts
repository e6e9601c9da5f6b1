import { existsSync } from "node:fs";
import { backlogSummary, readBacklog } from "../capture/backlog";
import { homeDir, loadConfig, pathsFor, readConfigFile, writeConfigFile } from "../config";
import { liveServer } from "../runtime-file";
import { autoAsker, lineAsker, type Asker } from "../setup/ask";
import { applyChanges, findHarnesses, planUnwiring, planWiring, readWiringManifest, WiringError, type FileChange, type HarnessId } from "../setup/harnesses";
import { LLM_CHOICES, LlmChoiceError, resolveChoice } from "../setup/llm-choice";
import { findLlms, liveTest, type LlmCandidate, type LlmSettings } from "../setup/llm-detect";
import { cliCandidates } from "../setup/llm-cli";
import { installService, planService, startDetached, uninstallService } from "../setup/service";
import { selfProgram } from "../setup/self-program";
import { restartServer, spawnBacklogCapture, waitForServer } from "../setup/server-control";
import { parseFlags, parsePort, UsageError } from "./args";
import { runChecks } from "../cli/doctor-checks";
import { ensureHome } from "./init";
import { selfArgv } from "./hooks";
import { printChecks } from "./doctor";

export const SETUP_HELP = `memsvc setup [--yes] [--dry-run] [--llm <choice>] [--model <name>] [--api-key <key>]
             [--port <int>] [--no-harnesses] [--no-service]

Takes this machine to a working memory, one step at a time: each step shows
what it will change and asks first (answers may be piped, a line each; when
the input ends, the remaining questions are answered no).

  1. home        creates $MEMSVC_HOME (default ~/.memsvc): config.json with a
                 bearer token (0600)
  2. model       finds a language model and writes config.json's llm after one
                 live call answered: a running Ollama or LM Studio on this
                 machine, then an API key in the environment (OPENAI_API_KEY
                 with OPENAI_BASE_URL/OPENAI_MODEL, ANTHROPIC_API_KEY,
                 GEMINI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY,
                 MISTRAL_API_KEY, DEEPSEEK_API_KEY). Claude Code, Codex and
                 Gemini CLI can serve as the model through their headless mode
                 (claude -p, codex exec, gemini -p): opt-in only, capped per
                 day, since it spends your subscription. With no model,
                 sessions are kept and distilled once one is configured.
  3. harnesses   wires every harness found (Claude Code, Codex CLI, Gemini CLI,
                 opencode): hooks and the MCP server, each file backed up first
  4. autostart   a launchd agent (macOS), a systemd user unit (Linux) or a
                 logon task (Windows) that keeps the server running; where none
                 is usable the file is written and the server started detached
  5. check       waits for the server, runs \`memsvc doctor\`, prints a summary

  --yes            answer yes to every question (scripts); harness CLIs as the
                   model are still only used when named with --llm
  --dry-run        print every change, write nothing, start nothing
  --llm <choice>   use this model: ${LLM_CHOICES.join(", ")},
                   or the http(s) URL of an OpenAI-compatible endpoint
  --model, --api-key   for --llm
  --port <int>     the server's port (config.json port), default 8787
  --no-harnesses, --no-service   skip that step
  --uninstall      undo steps 3 and 4: each harness file restored (byte for
                   byte where nothing changed it since), the autostart
                   removed, the server it started stopped; the home stays

A second run changes nothing and says so.
Exit status: 0 done (a missing model is not an error: capture waits for it),
1 a step failed, 2 usage errors.`;

interface Ctx {
  env: NodeJS.ProcessEnv;
  home: string;
  dryRun: boolean;
  ask: Asker;
  /** What was changed, for the summary. */
  changed: string[];
  /** The steps the user answered no to: "nothing changed" must not then claim the machine was set up. */
  declined: string[];
  backups: string[];
  say: (line: string) => void;
}

export async function runSetup(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    yes: { type: "boolean", short: "y" },
    "dry-run": { type: "boolean" },
    llm: { type: "string" },
    model: { type: "string" },
    "api-key": { type: "string" },
    port: { type: "string", short: "p" },
    "no-harnesses": { type: "boolean" },
    "no-service": { type: "boolean" },
    uninstall: { type: "boolean" },
  });
  if (values.help) {
    console.log(SETUP_HELP);
    return 0;
  }
  const port = values.port === undefined ? undefined : parsePort(values.port);
  const dryRun = values["dry-run"] === true;
  if ((values.model !== undefined || values["api-key"] !== undefined) && values.llm === undefined) throw new UsageError("--model and --api-key go with --llm");
  const ask = dryRun || values.yes ? autoAsker() : lineAsker();
  const env = process.env;
  const ctx: Ctx = { env, home: homeDir(env), dryRun, ask, changed: [], declined: [], backups: [], say: (line) => console.log(line) };
  if (values.uninstall) {
    if (values.llm !== undefined || values.port !== undefined) throw new UsageError("--uninstall takes no --llm or --port");
    try {
      return await undoSetup(ctx);
    } finally {
      ask.close();
    }
  }
  try {
    await stepHome(ctx, port);
    const llmChanged = await stepModel(ctx, values.llm, values.model, values["api-key"]);
    if (values["no-harnesses"] !== true) await stepHarnesses(ctx);
    const noService = values["no-service"] === true;
    const started = noService ? await startWithoutService(ctx) : await stepService(ctx);
    if (!dryRun && llmChanged && !started) {
      const opts = { command: selfProgram(), home: ctx.home, env: ctx.env };
      await restartServer(ctx.home, ctx.say, async () => {
        if (noService) await startDetached(opts);
        else ctx.say((await installService({ ...opts, log: ctx.say })).message);
      });
    }
    return await stepCheck(ctx, llmChanged);
  } catch (e) {
    if (e instanceof LlmChoiceError) {
      console.error(`memsvc setup: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    ask.close();
  }
}

/** The user answered no: said at once, and named again in the summary. */
function decline(ctx: Ctx, step: string, hint = ""): void {
  ctx.declined.push(step);
  ctx.say(`skipped${hint}`);
}

function heading(ctx: Ctx, n: number, title: string): void {
  ctx.say(`\n[${n}/5] ${title}`);
}

async function stepHome(ctx: Ctx, port: number | undefined): Promise<void> {
  heading(ctx, 1, "home");
  const paths = pathsFor(ctx.home);
  const exists = existsSync(paths.config);
  const current = exists ? readConfigFile(paths.config) : {};
  const portChange = port !== undefined && current.port !== port;
  if (exists && !portChange) {
    ctx.say(`${paths.config} exists; kept as it is`);
    return;
  }
  const what = exists
    ? `set port ${port} in ${paths.config}`
    : `create ${ctx.home} and ${paths.config} with a new bearer token (mode 0600)${port !== undefined ? `, port ${port}` : ""}`;
  if (ctx.dryRun) return ctx.say(`would ${what}`);
  if (!(await ctx.ask.confirm(`${what}?`, true))) return decline(ctx, "home");
  ensureHome(false, ctx.env);
  if (port !== undefined) writeConfigFile(paths.config, { ...readConfigFile(paths.config), port });
  ctx.changed.push(exists ? `port ${port} in ${paths.config}` : `created ${paths.config}`);
  ctx.say(`done: ${what}`);
}

/** The model step; true when config.json's llm changed (a running server must restart to use it). */
async function stepModel(ctx: Ctx, choice: string | undefined, model: string | undefined, apiKey: string | undefined): Promise<boolean> {
  heading(ctx, 2, "language model");
  const paths = pathsFor(ctx.home);
  const current = existsSync(paths.config) ? readConfigFile(paths.config) : {};
  const clis = cliCandidates(ctx.env);
  let pick: LlmCandidate | null = null;
  if (choice !== undefined) {
    pick = await resolveChoice(choice, { model, apiKey, env: ctx.env, cliCandidates: clis });
    if (pick === null) return writeLlm(ctx, current, null, "remove the language model (recall-only operation; capture waits)");
    const failed = await liveTest(pick.llm, ctx.home);
    if (failed) throw new LlmChoiceError(`${pick.label} did not answer a test call: ${failed}`);
    ctx.say(`${pick.label}: answered a test call`);
  } else {
    const configured = current.llm && (current.llm.baseURL || current.llm.provider);
    if (configured) {
      const failed = await liveTest(current.llm, ctx.home);
      if (!failed) {
        ctx.say(
          `already configured and answering (${current.llm.provider ?? current.llm.baseURL} ${current.llm.model ?? ""}); nothing to change`.replace(/ \)/, ")"),
        );
        return false;
      }
      ctx.say(`the configured model does not answer: ${failed}; looking for another`);
    }
    const found = await findLlms(ctx.env);
    for (const c of found) {
      const failed = await liveTest(c.llm, ctx.home);
      ctx.say(failed ? `found ${c.label}, but a test call failed: ${failed}` : `found ${c.label}: answered a test call`);
      if (!failed) {
        pick = c;
        break;
      }
    }
    if (!pick && clis.length > 0) {
      for (const c of clis) {
        ctx.say(
          `found ${c.label}: it can distil through your subscription (opt-in; each captured session costs a few calls, at most ${c.llm.dailyCap ?? "the daily cap of"} a day)`,
        );
        if (ctx.dryRun || !(await ctx.ask.confirm(`use ${c.label} as the language model?`, false))) {
          ctx.say(`not used; to choose it later: memsvc setup --llm ${c.id}`);
          continue;
        }
        const failed = await liveTest(c.llm, ctx.home);
        if (failed) ctx.say(`a test call failed: ${failed}`);
        else {
          pick = c;
          break;
        }
      }
    }
    if (!pick) {
      if (configured) return false;
      ctx.say(
        [
          "no language model found. memsvc still works: recall, search and the pages answer, and every",
          "session your agents end is kept (its capture waits, the watermark stays put) and distilled once",
          "a model is configured. Configure one later with, e.g.:",
          "  memsvc setup --llm ollama            (a running Ollama with a chat model pulled)",
          "  memsvc setup --llm openai            (OPENAI_API_KEY set; or --api-key)",
          "  memsvc setup --llm http://host:port/v1 --model <name>   (any OpenAI-compatible server)",
          `  memsvc setup --llm claude-cli        (Claude Code's headless mode; spends your subscription)`,
        ].join("\n"),
      );
      return false;
    }
  }
  if (pick.keyFrom && pick.keyFrom !== "--api-key")
    ctx.say(`the key from $${pick.keyFrom} goes into ${paths.config} (0600): the server started at login does not see your shell's environment`);
  return writeLlm(ctx, current, pick.llm, `use ${pick.label}`);
}

async function writeLlm(ctx: Ctx, current: Record<string, any>, llm: LlmSettings | null, what: string): Promise<boolean> {
  const paths = pathsFor(ctx.home);
  const keep = { ...(current.llm ?? {}) };
  // Connection settings are replaced as a whole; tuning the user set (timeouts, caps) stays.
  for (const k of ["baseURL", "apiKey", "model", "provider", "command"]) delete keep[k];
  const next = llm === null ? keep : { ...keep, ...llm };
  if (JSON.stringify(next) === JSON.stringify(current.llm ?? {})) {
    ctx.say("nothing to change");
    return false;
  }
  if (ctx.dryRun) {
    ctx.say(`would ${what}: llm in ${paths.config}`);
    return false;
  }
  if (!(await ctx.ask.confirm(`${what}?`, true))) {
    decline(ctx, "language model");
    return false;
  }
  ensureHome(false, ctx.env);
  const fresh = readConfigFile(paths.config);
  const merged: Record<string, unknown> = { ...fresh };
  if (Object.keys(next).length > 0) merged.llm = next;
  else delete merged.llm;
  writeConfigFile(paths.config, merged);
  ctx.changed.push(`llm in ${paths.config}: ${what.replace(/^use /, "")}`);
  ctx.say(`done: ${what}`);
  return true;
}

async function stepHarnesses(ctx: Ctx): Promise<void> {
  heading(ctx, 3, "agent harnesses (hooks and MCP)");
  const found = findHarnesses(ctx.env).filter((h) => h.found);
  if (found.length === 0) {
    ctx.say("no agent harness found (Claude Code, Codex CLI, Gemini CLI, opencode); run `memsvc setup` again after installing one");
    return;
  }
  for (const h of found) {
    const changes: FileChange[] = planWiring(h.id, { command: selfArgv(ctx.env), env: ctx.env });
    if (changes.length === 0) {
      ctx.say(`${h.name}: already wired; nothing to change`);
      continue;
    }
    ctx.say(`${h.name} (${h.evidence}):`);
    for (const c of changes) for (const line of c.summary) ctx.say(`  ${c.file}: ${line}`);
    if (ctx.dryRun) continue;
    if (!(await ctx.ask.confirm(`wire ${h.name}?`, true))) {
      decline(ctx, h.name);
      continue;
    }
    const written = applyChanges(changes, { home: ctx.home });
    for (const w of written) {
      ctx.changed.push(`${h.name}: ${w.file}`);
      if (w.backup) ctx.backups.push(w.backup);
    }
    ctx.say(`done: ${h.name} wired`);
  }
}

/** Autostart; true when this step (re)started the server. */
async function stepService(ctx: Ctx): Promise<boolean> {
  heading(ctx, 4, "autostart");
  const opts = { command: selfProgram(), home: ctx.home, env: ctx.env };
  const plan = planService(opts);
  if (ctx.dryRun) {
    const r = await installService({ ...opts, dryRun: true, log: ctx.say });
    ctx.say(r.message);
    return false;
  }
  if (!(await ctx.ask.confirm(`install ${plan.file} (${plan.manager}) to keep the server running, and start it?`, true))) {
    decline(ctx, "autostart", "; start the server yourself with `memsvc server`");
    return false;
  }
  const r = await installService({ ...opts, log: ctx.say });
  ctx.say(r.message);
  if (r.file && !/nothing|unchanged|already installed/i.test(r.message)) ctx.changed.push(`autostart: ${r.file}`);
  return r.started === "service" || r.started === "detached";
}

async function startWithoutService(ctx: Ctx): Promise<boolean> {
  heading(ctx, 4, "autostart (skipped: --no-service)");
  if (ctx.dryRun || liveServer(ctx.home)) return false;
  const s = await startDetached({ command: selfProgram(), home: ctx.home, env: ctx.env });
  ctx.say(`started the server detached (pid ${s.pid}, ${s.url}); it does not come back after a reboot`);
  return true;
}

/**
 * `memsvc setup --uninstall`: the harness files restored (byte for byte where
 * nothing changed them since), the autostart removed and the server it
 * started stopped. The home, its memories and config.json stay.
 */
async function undoSetup(ctx: Ctx): Promise<number> {
  const ids = new Set<HarnessId>(
    findHarnesses(ctx.env)
      .filter((h) => h.found)
      .map((h) => h.id),
  );
  for (const rec of Object.values(readWiringManifest(ctx.home).files)) ids.add(rec.harness);
  let failed = 0;
  for (const id of ids) {
    let changes: FileChange[];
    try {
      changes = planUnwiring(id, { env: ctx.env, home: ctx.home });
    } catch (e) {
      if (!(e instanceof WiringError)) throw e;
      ctx.say(`${id}: ${e.message}`);
      failed++;
      continue;
    }
    if (changes.length === 0) continue;
    for (const c of changes) for (const line of c.summary) ctx.say(`${c.file}: ${line}`);
    if (ctx.dryRun) continue;
    if (!(await ctx.ask.confirm(`undo memsvc's wiring of ${id}?`, true))) {
      decline(ctx, id);
      continue;
    }
    applyChanges(changes, { home: ctx.home });
    ctx.changed.push(`${id}: restored ${changes.map((c) => c.file).join(", ")}`);
  }
  const opts = { command: selfProgram(), home: ctx.home, env: ctx.env };
  if (ctx.dryRun || (await ctx.ask.confirm("remove the autostart and stop the server it started?", true))) {
    const r = await uninstallService({ ...opts, dryRun: ctx.dryRun, log: ctx.say });
    ctx.say(r.message);
    if (r.removed) ctx.changed.push(`autostart: removed ${r.removed}`);
  } else decline(ctx, "autostart");
  ctx.say(
    ctx.changed.length > 0
      ? `undone:\n${ctx.changed.map((c) => `  ${c}`).join("\n")}`
      : ctx.declined.length > 0
        ? `nothing undone: you answered no to ${ctx.declined.join(", ")}`
        : "nothing to undo",
  );
  ctx.say(`kept: ${ctx.home} (memories, config.json, backups); delete it yourself to forget everything`);
  return failed === 0 ? 0 : 1;
}

async function stepCheck(ctx: Ctx, llmChanged: boolean): Promise<number> {
  heading(ctx, 5, "check");
  if (ctx.dryRun) {
    ctx.say("(dry run: nothing was written, nothing started)");
    return 0;
  }
  const server = await waitForServer(ctx.home, 20_000);
  if (!server) ctx.say("no server answers yet: see the log in <home>/logs/server.log, or start it with `memsvc server`");
  const config = loadConfig(ctx.env);
  const checks = await runChecks(config, ctx.env);
  const failed = printChecks(checks);
  const backlog = backlogSummary(readBacklog(ctx.home));
  if (llmChanged && backlog.total > 0 && server) {
    const log = spawnBacklogCapture(ctx.home, ctx.env);
    ctx.say(`\n${backlog.total} waiting session${backlog.total === 1 ? " is" : "s are"} being distilled in the background (log: ${log})`);
  }
  ctx.say("\nsummary");
  if (ctx.changed.length > 0) ctx.say(ctx.changed.map((c) => `  changed: ${c}`).join("\n"));
  else if (ctx.declined.length > 0) ctx.say(`  nothing changed: you answered no to ${ctx.declined.join(", ")} (run \`memsvc setup\` again to do it)`);
  else ctx.say("  nothing changed: this machine was set up already");
  if (ctx.changed.length > 0 && ctx.declined.length > 0) ctx.say(`  not done (you answered no): ${ctx.declined.join(", ")}`);
  if (ctx.backups.length > 0) ctx.say(`  backups: ${ctx.backups.join(", ")}`);
  if (server) ctx.say(`  pages:   ${server}/memories  (dashboard ${server}/dashboard, graph ${server}/viz, identity ${server}/identity/ui)`);
  return failed === 0 ? 0 : 1;
}
