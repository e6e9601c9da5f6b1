import { existsSync } from "node:fs";
import { loadConfig } from "../config";
import { stderrLogger } from "../core/log";
import { defaultDay, NightlyInterrupted, owedDays, parseDay, runNightly, type NightlyProgress } from "../core/nightly";
import { createServices } from "../core/services";
import { loadEmbedder } from "../embed";
import { AppError } from "../errors";
import type { Storage } from "../core/storage";
import { storageFailure } from "../store/failures";
import { openStorage } from "../store/open";
import { parseFlags, UsageError } from "./args";

export const NIGHTLY_HELP = `memsvc nightly [--day YYYY-MM-DD] [--force] [--dry-run] [--json]

Runs the nightly consolidation now, the same job the server runs on its
schedule (config nightly.schedule, default "30 3 * * *"; nightly.enabled
false turns the schedule off):
  learn   the day's memories go to the language model, which writes
          actionable learnings (memory_type learnings, linked derived_from
          to their sources); at most nightly.maxModelCalls calls per run
  recheck memories marked possibly stale (memsvc stale) go to the model
          with the session lines they came from and what changed; it
          confirms (the mark goes), rewrites (history kept) or retires
          them; without a model the marks stay (re-check owed)
  merge   near-duplicates of the day are folded into the stronger copy
  decay   memories shown but ignored on the day lose strength
  prune   faded, never-used, old memories are deleted; idle recall
          sessions are forgotten
Without a language model the other steps still run, but the learn step is
owed: the day is not marked consolidated (status partial, exit 3), and the
next run with a model configured writes its learnings (without --day,
\`memsvc nightly\` and the schedule take up owed days of the last 30).

A day is consolidated once: a second run says so and does nothing unless
--force. An interrupted run (crash, Ctrl-C, model outage) resumes where it
stopped on the next run for that day. Safe to run while the server is up
(the server picks up new learnings' vectors at its next start; until then
they are found by keyword search).

Options:
  --day YYYY-MM-DD  the UTC day to consolidate (default: yesterday, UTC, plus
                    days whose learnings are owed when a model is configured)
  --force           run again even if the day was already consolidated
  --dry-run         report what would be done; change nothing
  --json            print the digest of the day (--day, or yesterday) as JSON
                    on stdout

Progress goes to stderr, including the fragments /distill dropped since the
last run. Exit status: 0 done (or already done); 3 partial: learnings are
owed (no model configured, or the model failed; run again with a model to
resume); 1 busy (another process runs that day) or an
error; 2 bad usage; 130 interrupted.`;

/** Exit status of a run whose learn step is still owed. */
export const EXIT_PARTIAL = 3;

export async function runNightlyCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { day: { type: "string" }, force: { type: "boolean" }, "dry-run": { type: "boolean" }, json: { type: "boolean" } });
  if (values.help) {
    console.log(NIGHTLY_HELP);
    return 0;
  }
  if (values.day !== undefined) {
    try {
      parseDay(values.day, Date.now());
    } catch (e) {
      throw new UsageError(`--day: ${(e as Error).message}`);
    }
  }
  const config = loadConfig(process.env);
  if (config.storage === "sqlite" && !existsSync(config.paths.db)) {
    console.error(`memsvc nightly: no database at ${config.paths.db}: nothing to consolidate (is MEMSVC_HOME right?)`);
    return 1;
  }
  const log = stderrLogger(process.env.MEMSVC_LOG === "debug" ? "debug" : "warn");
  // Never download here: a batch job must not stall on the network, and must
  // not swap the database's vector space for the hashing fallback either.
  const embedder = await loadEmbedder({ home: config.home, model: config.embedder.model, offline: true, log: (line) => log("debug", line) });
  // Read before the services start on the store: they claim its vector space for this embedder.
  let storage: Storage | null = null;
  let recorded: string | null;
  try {
    storage = openStorage(config);
    recorded = (await storage.memories.embedderState()).embedderId;
  } catch (e) {
    await storage?.close();
    await embedder.close?.();
    const failure = e instanceof AppError ? e : storageFailure(e);
    if (failure) {
      console.error(`memsvc nightly: ${failure.message}`);
      return 1;
    }
    throw e;
  }
  if (recorded !== null && recorded !== embedder.id) {
    await storage.close();
    await embedder.close?.();
    console.error(
      `memsvc nightly: the stored vectors were made by ${recorded}, but only ${embedder.id} can be loaded here; ` +
        `put the model files into ${config.paths.models} or let the server's schedule run the consolidation`,
    );
    return 1;
  }
  const services = createServices(config, storage, { embedder, log });
  // Merging and learning search the vector index: wait for a large store's background load.
  await services.indexState.ready;
  const abort = new AbortController();
  const onSignal = () => {
    process.stderr.write("memsvc nightly: stopping after the current step (run again to resume)\n");
    abort.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const progress = (e: NightlyProgress) => {
    const count = e.total ? ` [${e.done ?? 0}/${e.total}]` : "";
    process.stderr.write(`nightly ${e.day} ${e.step}${count}: ${e.message}\n`);
  };
  try {
    const main = values.day ?? defaultDay(Date.now());
    // With a model, days left partial (learnings owed) are paid back first, oldest first.
    const owed = values.day === undefined && values["dry-run"] !== true && services.llm ? (await owedDays(services)).filter((d) => d !== main) : [];
    let code = 0;
    for (const day of [...owed, main]) {
      const outcome = await runNightly(services, {
        day,
        force: values.force === true && day === main,
        dryRun: values["dry-run"] === true,
        signal: abort.signal,
        progress,
      });
      if (values.json && day === main) console.log(JSON.stringify(outcome.digest, null, 2));
      else if (values.json) process.stderr.write(`${outcome.message}\n`);
      else console.log(outcome.message);
      const dayCode = !outcome.ran ? (/in progress/.test(outcome.message) ? 1 : 0) : outcome.digest?.status === "partial" ? EXIT_PARTIAL : 0;
      if (dayCode === 1 || (dayCode === EXIT_PARTIAL && code === 0)) code = dayCode;
    }
    return code;
  } catch (e) {
    if (e instanceof NightlyInterrupted) {
      console.error(`memsvc nightly: ${e.message}`);
      return 130;
    }
    if (e instanceof AppError) {
      console.error(`memsvc nightly: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await services.close();
  }
}
