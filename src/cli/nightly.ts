import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { loadConfig } from "../config";
import { stderrLogger } from "../core/log";
import { NightlyInterrupted, parseDay, runNightly, type NightlyProgress } from "../core/nightly";
import { createServices } from "../core/services";
import { loadEmbedder } from "../embed";
import { AppError } from "../errors";
import { parseFlags, UsageError } from "./args";

export const NIGHTLY_HELP = `memsvc nightly [--day YYYY-MM-DD] [--force] [--dry-run] [--json]

Runs the nightly consolidation now, the same job the server runs on its
schedule (config nightly.schedule, default "30 3 * * *"; nightly.enabled
false turns the schedule off):
  learn   the day's memories go to the language model, which writes
          actionable learnings (memory_type learnings, linked derived_from
          to their sources); at most nightly.maxModelCalls calls per run
  merge   near-duplicates of the day are folded into the stronger copy
  decay   memories shown but ignored on the day lose strength
  prune   faded, never-used, old memories are deleted; idle recall
          sessions are forgotten
Without a language model the learn step is skipped and the rest still runs.

A day is consolidated once: a second run says so and does nothing unless
--force. An interrupted run (crash, Ctrl-C, model outage) resumes where it
stopped on the next run for that day. Safe to run while the server is up
(the server picks up new learnings' vectors at its next start; until then
they are found by keyword search).

Options:
  --day YYYY-MM-DD  the UTC day to consolidate (default: yesterday, UTC)
  --force           run again even if the day was already consolidated
  --dry-run         report what would be done; change nothing
  --json            print the digest as JSON on stdout

Progress goes to stderr. Exit status: 0 done (or already done), 1 partial
(the model failed; run again to resume) or busy, 130 interrupted.`;

/** The embedder the database's vectors were made with (null for a new database). */
function recordedEmbedder(file: string): string | null {
  if (!existsSync(file)) return null;
  const db = new Database(file, { readonly: true });
  try {
    return db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'embedder_id'").get()?.value ?? null;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

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
  if (!existsSync(config.paths.db)) {
    console.error(`memsvc nightly: no database at ${config.paths.db}: nothing to consolidate (is MEMSVC_HOME right?)`);
    return 1;
  }
  const log = stderrLogger(process.env.MEMSVC_LOG === "debug" ? "debug" : "warn");
  // Never download here: a batch job must not stall on the network, and must
  // not swap the database's vector space for the hashing fallback either.
  const embedder = await loadEmbedder({ home: config.home, model: config.embedder.model, offline: true, log: (line) => log("debug", line) });
  const recorded = recordedEmbedder(config.paths.db);
  if (recorded !== null && recorded !== embedder.id) {
    await embedder.close?.();
    console.error(
      `memsvc nightly: the stored vectors were made by ${recorded}, but only ${embedder.id} can be loaded here; ` +
        `put the model files into ${config.paths.models} or let the server's schedule run the consolidation`,
    );
    return 1;
  }
  const services = createServices(config, { embedder, log });
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
    const outcome = await runNightly(services, { day: values.day, force: values.force === true, dryRun: values["dry-run"] === true, signal: abort.signal, progress });
    if (values.json) console.log(JSON.stringify(outcome.digest, null, 2));
    else console.log(outcome.message);
    if (!outcome.ran) return /in progress/.test(outcome.message) ? 1 : 0;
    return outcome.digest?.status === "partial" ? 1 : 0;
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
