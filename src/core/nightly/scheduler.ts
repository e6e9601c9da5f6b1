import { Cron } from "croner";
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
 * configuration error rather than silently never running.
 */
export function startNightlySchedule(s: Services): { stop(): void } {
  const { enabled, schedule } = s.config.nightly;
  if (!enabled) {
    s.log("info", "nightly consolidation: schedule off (nightly.enabled is false); `memsvc nightly` still runs it by hand");
    return { stop() {} };
  }
  const abort = new AbortController();
  let job: Cron;
  try {
    job = new Cron(schedule, { protect: true, catch: true, unref: true }, () => runScheduledNightly(s, abort.signal));
  } catch (e) {
    throw new ConfigError(`${s.config.paths.config}: key "nightly.schedule" is not a valid cron expression ("${schedule}"): ${(e as Error).message}`);
  }
  const next = job.nextRun();
  s.log("info", `nightly consolidation scheduled "${schedule}"${next ? `, next run ${next.toISOString()}` : ""}`);
  return {
    stop() {
      job.stop();
      abort.abort();
    },
  };
}
