import { Cron, CronPattern } from "croner";
import { ConfigError } from "../../errors";
import { daysToRun, NightlyInterrupted, runNightly } from "./nightly";
import type { Services } from "../services";

/**
 * What the schedule does when it fires: yesterday's consolidation, plus any
 * recent day left unfinished (server down, crash). Errors are logged, never
 * thrown: a failed night must not take the server down.
 */
export async function runScheduledNightly(s: Services, signal?: AbortSignal): Promise<void> {
  // Near-duplicate merging and learning search the vector index: never against a half-loaded one.
  await s.indexState.ready;
  for (const day of await daysToRun(s)) {
    if (signal?.aborted) return;
    try {
      const outcome = await s.track(runNightly(s, { day, signal }));
      s.log(outcome.ran ? "info" : "debug", outcome.message);
    } catch (e) {
      if (e instanceof NightlyInterrupted) {
        s.log("info", e.message);
        return;
      }
      s.log("error", `nightly run for ${day} failed: ${(e as Error).message}; the next run resumes it`, { stack: (e as Error).stack });
    }
  }
}

/**
 * Runs the nightly consolidation inside the server on `nightly.schedule` (a
 * cron expression in the server's local time; default 03:30), unless
 * `nightly.enabled` is false. A bad expression stops start-up with a
 * configuration error rather than silently never running. `delayMs`: the
 * job is set up that much later (the server: NIGHTLY_SCHEDULE_DELAY_MS, so
 * its cost is not paid before the first answers); the expression is checked
 * at once either way.
 */
export function startNightlySchedule(s: Services, opts: { delayMs?: number } = {}): { stop(): void } {
  const { enabled, schedule } = s.config.nightly;
  if (!enabled) {
    s.log("info", "nightly consolidation: schedule off (nightly.enabled is false); `memsvc nightly` still runs it by hand");
    return { stop() {} };
  }
  const invalid = (e: unknown) =>
    new ConfigError(`${s.config.paths.config}: key "nightly.schedule" is not a valid cron expression ("${schedule}"): ${(e as Error).message}`);
  try {
    // Parsing alone (~1.5 ms): the schedule's first local-time computation is what costs (see below).
    new CronPattern(schedule);
  } catch (e) {
    throw invalid(e);
  }
  const abort = new AbortController();
  let job: Cron | null = null;
  let stopped = false;
  const start = () => {
    if (stopped) return;
    try {
      job = new Cron(schedule, { protect: true, catch: true, unref: true }, () => runScheduledNightly(s, abort.signal));
    } catch (e) {
      if (!opts.delayMs) throw invalid(e);
      s.log("error", invalid(e).message);
      return;
    }
    const next = job.nextRun();
    s.log("info", `nightly consolidation scheduled "${schedule}"${next ? `, next run ${next.toISOString()}` : ""}`);
  };
  const timer = opts.delayMs ? setTimeout(start, opts.delayMs) : null;
  timer?.unref();
  if (!timer) start();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      job?.stop();
      abort.abort();
    },
  };
}
