import { hostname } from "node:os";
import { invalid } from "../../errors";
import { isoDate, isoTime } from "../dates";
import { learnStep } from "./learn";
import { newRecheckDigest, recheckStep } from "./recheck";
import { ensureCalibration } from "../search";
import { decayStep, mergeStep, pruneStep } from "./maintain";
import {
  NightlyInterrupted,
  NightlyLeaseLost,
  STEPS,
  type NightlyCursor,
  type NightlyDigest,
  type NightlyOptions,
  type NightlyOutcome,
  type RunContext,
} from "./types";
import type { Services } from "../services";
import { NIGHTLY_CATCHUP_DAYS, NIGHTLY_HEARTBEATS_PER_LEASE, NIGHTLY_LEASE_MS, NIGHTLY_OWED_DAYS } from "./tuning";
import type { NightlyRunRow } from "./store";
import { counted } from "../text";

export { NightlyInterrupted, NightlyLeaseLost } from "./types";
export type { NightlyDigest, NightlyOptions, NightlyOutcome, NightlyProgress } from "./types";

const DAY_MS = 86_400_000;
const HOST = hostname();
// A run's owner is "host:pid:tag" (s.state.nightlyOwner): one tag per Services
// (one server), so two servers in one process are as separate as two
// processes; a run left "running" by a dead owner (or by this server, but no
// longer active) is resumed.
const active = new Set<string>();

function ownerOf(s: Services): string {
  return s.state.nightlyOwner;
}

/**
 * The day a run consolidates when none is given: yesterday (UTC). The
 * schedule fires at night, after the day is over, and a manual run picks the
 * same day, so the two never split one day between them.
 */
export function defaultDay(now: number): string {
  return isoDate(now - DAY_MS);
}

export function parseDay(value: unknown, now: number): string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw invalid(`day must be a date YYYY-MM-DD, got "${String(value).slice(0, 40)}"`);
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (!Number.isFinite(ms) || isoDate(ms) !== value) throw invalid(`day is not a real date: "${value}"`);
  if (ms > now) throw invalid(`day ${value} is in the future`);
  return value;
}

/** How long a silent owner keeps its run; the heartbeat renews it well within. */
function leaseMs(s: Services): number {
  return Math.max(NIGHTLY_LEASE_MS, 3 * s.config.llm.timeoutMs);
}

function ownerAlive(s: Services, row: NightlyRunRow, me: string): boolean {
  if (row.owner === me) return active.has(`${me}#${row.day}`);
  const fresh = s.now() - row.heartbeatAt < leaseMs(s);
  const [host, pid] = row.owner.split(":");
  if (host !== HOST) return fresh;
  try {
    process.kill(Number(pid), 0);
    return fresh;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM" && fresh;
  }
}

function newDigest(day: string, now: number, forced: boolean, model: string | null, maxCalls: number): NightlyDigest {
  return {
    run_id: null,
    day,
    status: "running",
    forced,
    started_at: isoTime(now),
    finished_at: null,
    model,
    considered: 0,
    read: 0,
    written: 0,
    learnings: [],
    rejected: 0,
    merged: 0,
    merges: [],
    dropped: 0,
    decayed: 0,
    sessions_expired: 0,
    dropped_fragments: { count: 0, by_reason: {} },
    held_back: { learn: 0, merge: 0 },
    model_calls: 0,
    max_model_calls: maxCalls,
    skipped: [],
    errors: [],
    steps: { learn: "pending", recheck: "pending", merge: "pending", decay: "pending", prune: "pending" },
    recheck: newRecheckDigest(),
    resumed: 0,
  };
}

type Claim =
  | { kind: "done"; row: NightlyRunRow }
  | { kind: "busy"; row: NightlyRunRow }
  | { kind: "run"; id: number; digest: NightlyDigest; cursor: NightlyCursor; resumed: boolean };

/** A partial or crashed run's state, ready to go on where it stopped. */
function resumeState(last: NightlyRunRow, model: string | null): { digest: NightlyDigest; cursor: NightlyCursor } {
  const digest = JSON.parse(last.digest) as NightlyDigest;
  const cursor = JSON.parse(last.cursor) as NightlyCursor;
  if (digest.steps.learn === "incomplete") {
    digest.steps.learn = "pending";
    digest.skipped = digest.skipped.filter((x) => x.step !== "learn");
    // New learnings may duplicate older ones: look for near-duplicates again.
    digest.steps.merge = "pending";
    delete cursor.merge;
  }
  // Marks owed a re-check (no model then, or it failed) are re-checked by a run that has one.
  if (digest.steps.recheck !== "done") {
    digest.steps.recheck = "pending";
    digest.skipped = digest.skipped.filter((x) => x.step !== "recheck");
  }
  digest.run_id = last.id;
  digest.status = "running";
  digest.finished_at = null;
  digest.model = model ?? digest.model;
  digest.resumed++;
  return { digest, cursor };
}

/**
 * Decides whether to start, resume or leave the day alone. Every server may
 * try at once: a start is one conditional INSERT (one running run per day, by
 * a unique index) and a take-over one conditional UPDATE of the row as it was
 * read, so exactly one wins; a loser reads again and finds the run busy.
 */
async function claim(s: Services, day: string, me: string, force: boolean, model: string | null): Promise<Claim> {
  const store = s.storage.nightly;
  for (let attempt = 0; ; attempt++) {
    const last = await store.lastRun(day);
    const now = s.now();
    if (last && last.status === "running" && ownerAlive(s, last, me)) return { kind: "busy", row: last };
    if (last && !force && last.status === "done") return { kind: "done", row: last };
    // Every lost race means another server changed the day meanwhile: after a few, it is theirs.
    if (attempt >= 5) {
      if (last) return { kind: "busy", row: last };
      throw new Error(`nightly run for ${day}: could not start it (the database refused every claim)`);
    }
    if (last && (!force || last.status === "running")) {
      // A crashed ("running", owner gone) or partial run: pick up where it stopped;
      // forced over a crashed one: start it again in the same row.
      const fresh = force ? { digest: { ...newDigest(day, now, true, model, s.config.nightly.maxModelCalls), run_id: last.id }, cursor: {} } : null;
      const { digest, cursor } = fresh ?? resumeState(last, model);
      const taken = await store.takeOverRun(
        { id: last.id, owner: last.owner, status: last.status, heartbeatAt: last.heartbeatAt },
        {
          owner: me,
          now,
          forced: force || last.forced,
          startedAt: force ? now : last.startedAt,
          cursor: JSON.stringify(cursor),
          digest: JSON.stringify(digest),
        },
      );
      if (taken) return { kind: "run", id: last.id, digest, cursor, resumed: fresh === null };
      continue;
    }
    const digest = newDigest(day, now, force, model, s.config.nightly.maxModelCalls);
    const id = await store.startRun({ day, forced: force, owner: me, now, digest: JSON.stringify(digest), afterId: last?.id ?? 0 });
    if (id !== null) return { kind: "run", id, digest: { ...digest, run_id: id }, cursor: {}, resumed: false };
  }
}

/**
 * The nightly consolidation of one day: learnings from the model, then
 * near-duplicate merging, decay of ignored memories and pruning. Idempotent
 * per day (a finished day is left alone unless `force`), once across every
 * server over one database (a lease with a heartbeat), resumable (every unit
 * of work commits with its progress; a dead owner's run is taken over from
 * its cursor), capped in model calls, and useful without a model (the other
 * steps still run; the digest says what was skipped).
 */
export async function runNightly(s: Services, opts: NightlyOptions = {}): Promise<NightlyOutcome> {
  const day = opts.day === undefined ? defaultDay(s.now()) : parseDay(opts.day, s.now());
  const me = ownerOf(s);
  const key = `${me}#${day}`;
  if (active.has(key)) return { ran: false, message: `the nightly run for ${day} is already in progress in this process`, digest: null };
  const llm = s.llm;
  const model = llm?.label ?? null;
  const window = Date.parse(`${day}T00:00:00Z`);
  let runId: number | null = null;
  let digest: NightlyDigest;
  let cursor: NightlyCursor = {};
  if (opts.dryRun) {
    digest = { ...newDigest(day, s.now(), opts.force === true, model, s.config.nightly.maxModelCalls), status: "dry-run" };
  } else {
    const c = await claim(s, day, me, opts.force === true, model);
    if (c.kind === "done") {
      return {
        ran: false,
        message: `${day} was already consolidated (run ${c.row.id}, finished ${isoTime(c.row.finishedAt ?? 0)}); use --force to run it again`,
        digest: JSON.parse(c.row.digest),
      };
    }
    if (c.kind === "busy") {
      return {
        ran: false,
        message: `a nightly run for ${day} is in progress (${c.row.owner}, last report ${isoTime(c.row.heartbeatAt)})`,
        digest: JSON.parse(c.row.digest),
      };
    }
    runId = c.id;
    digest = c.digest;
    cursor = c.cursor;
    if (c.resumed)
      opts.progress?.({
        day,
        step: "learn",
        message: `resuming run ${runId} (${STEPS.filter((st) => digest.steps[st] === "done").join(", ") || "nothing"} already done)`,
      });
  }
  // Lost when another server took the run over (this one was silent past the lease): stop at once.
  let lost = false;
  const ctx: RunContext = {
    s,
    day,
    start: window,
    end: window + DAY_MS,
    digest,
    cursor,
    dryRun: opts.dryRun === true,
    signal: opts.signal,
    progress: (step, message, done, total) => opts.progress?.({ day, step, message, done, total }),
    async save(tx) {
      if (runId === null) return;
      const held = await (tx ?? s.storage).nightly.saveRun(runId, me, { cursor: JSON.stringify(cursor), digest: JSON.stringify(digest), now: s.now() });
      if (!held) {
        lost = true;
        throw new NightlyLeaseLost(day);
      }
    },
    checkpoint() {
      if (lost) throw new NightlyLeaseLost(day);
      if (opts.signal?.aborted) throw new NightlyInterrupted(day);
    },
  };
  active.add(key);
  // The heartbeat renews the lease while a step waits on the model or a long batch.
  const beat =
    runId === null
      ? null
      : setInterval(
          () => {
            s.storage.nightly.heartbeat(runId!, me, s.now()).then(
              (held) => (lost ||= !held),
              (e) => s.log("warn", `nightly heartbeat failed: ${(e as Error).message}`),
            );
          },
          Math.max(1000, Math.floor(leaseMs(s) / NIGHTLY_HEARTBEATS_PER_LEASE)),
        );
  (beat as { unref?: () => void } | null)?.unref?.();
  try {
    // A store that grew a lot since its calibration is measured again before merging by similarity.
    if (!ctx.dryRun) await ensureCalibration(s).catch((e) => s.log("warn", `calibration failed: ${(e as Error).message}; thresholds unchanged`));
    for (const step of STEPS) {
      if (digest.steps[step] !== "pending") continue;
      ctx.checkpoint();
      ctx.progress(step, "starting");
      if (step === "learn") await learnStep(ctx, llm);
      else if (step === "recheck") await recheckStep(ctx, llm);
      else if (step === "merge") await mergeStep(ctx);
      else if (step === "decay") await decayStep(ctx);
      else await pruneStep(ctx);
    }
    if (!ctx.dryRun) digest.status = digest.steps.learn === "incomplete" ? "partial" : "done";
    digest.finished_at = isoTime(s.now());
    if (runId !== null) {
      const held = await s.storage.nightly.finishRun(runId, me, {
        status: digest.status,
        cursor: JSON.stringify(cursor),
        digest: JSON.stringify(digest),
        now: s.now(),
      });
      if (!held) throw new NightlyLeaseLost(day);
    }
  } finally {
    if (beat) clearInterval(beat);
    active.delete(key);
  }
  return { ran: true, message: summarize(digest), digest };
}

/** One line for logs and the CLI. */
export function summarize(d: NightlyDigest): string {
  const parts = [
    `read ${d.read}/${counted(d.considered, "memory", "memories")}`,
    `wrote ${counted(d.written, "learning")}`,
    `merged ${d.merged}`,
    `dropped ${d.dropped}`,
    `decayed ${d.decayed}`,
    ...(d.held_back && d.held_back.learn + d.held_back.merge > 0
      ? [`held back by feedback: ${counted(d.held_back.learn, "memory", "memories")} not sent to the model, ${counted(d.held_back.merge, "pair")} not merged`]
      : []),
    ...(d.recheck && d.recheck.due > 0
      ? [
          `re-checked ${d.recheck.confirmed + d.recheck.rewritten + d.recheck.retired + d.recheck.unusable}/${d.recheck.due} stale (confirmed ${d.recheck.confirmed}, rewrote ${d.recheck.rewritten}, retired ${d.recheck.retired})`,
        ]
      : []),
    `${d.model_calls}/${counted(d.max_model_calls, "model call")}`,
  ];
  const skipped = d.skipped.map((x) => `skipped ${x.step}${x.memories ? ` (${counted(x.memories, "memory", "memories")})` : ""}: ${x.reason}`);
  return `nightly ${d.day} ${d.status}: ${parts.join(", ")}${skipped.length ? `; ${skipped.join("; ")}` : ""}`;
}

/** The last `n` runs, newest first (the dashboard's nightly digest). */
export async function latestDigests(s: Services, n = 7): Promise<NightlyDigest[]> {
  return (await s.storage.nightly.latestRuns(Math.max(1, Math.min(100, Math.floor(n))))).map((r) => ({
    ...(JSON.parse(r.digest) as NightlyDigest),
    run_id: r.id,
    status: r.status as NightlyDigest["status"],
  }));
}

/**
 * Days whose last run is partial (learnings owed: no model was configured,
 * or it failed), back to NIGHTLY_OWED_DAYS, oldest first.
 */
export function owedDays(s: Services): Promise<string[]> {
  return s.storage.nightly.partialDays(isoDate(s.now() - NIGHTLY_OWED_DAYS * DAY_MS));
}

/**
 * Days the schedule should run, oldest first: yesterday, plus recent days
 * with no finished run (the server was down that night, or a run crashed),
 * plus, once a language model is configured, older days whose learnings
 * are still owed.
 */
export async function daysToRun(s: Services): Promise<string[]> {
  const now = s.now();
  const days = new Set<string>(s.llm ? await owedDays(s) : []);
  for (let back = NIGHTLY_CATCHUP_DAYS; back >= 1; back--) {
    const day = isoDate(now - back * DAY_MS);
    const last = await s.storage.nightly.lastRun(day);
    if (back === 1 || !last || last.status !== "done") days.add(day);
  }
  return [...days].sort();
}
