import { hostname } from "node:os";
import { invalid } from "../../errors";
import { createLlmClient } from "../../llm/client";
import { isoDate, isoTime } from "../dates";
import { learnStep } from "./learn";
import { ensureCalibration } from "../search";
import { decayStep, mergeStep, pruneStep } from "./maintain";
import { NightlyInterrupted, STEPS, type NightlyCursor, type NightlyDigest, type NightlyOptions, type NightlyOutcome, type RunContext } from "./types";
import type { Services } from "../services";
import { NIGHTLY_CATCHUP_DAYS, NIGHTLY_LEASE_MS, NIGHTLY_OWED_DAYS } from "../tuning";
import { counted } from "../text";

export { NightlyInterrupted } from "./types";
export type { NightlyDigest, NightlyOptions, NightlyOutcome, NightlyProgress } from "./types";

const DAY_MS = 86_400_000;
const HOST = hostname();
// Identifies this process as the owner of a run: a run left "running" by a
// dead owner (or by this process, but no longer active) is resumed.
const OWNER = `${HOST}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
const active = new Set<string>();

interface RunRow {
  id: number;
  day: string;
  status: string;
  owner: string;
  heartbeat_at: number;
  finished_at: number | null;
  cursor: string;
  digest: string;
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

function ownerAlive(s: Services, row: RunRow, key: string): boolean {
  if (row.owner === OWNER) return active.has(key);
  const lease = Math.max(NIGHTLY_LEASE_MS, 3 * s.config.llm.timeoutMs);
  const fresh = s.now() - row.heartbeat_at < lease;
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
    model_calls: 0,
    max_model_calls: maxCalls,
    skipped: [],
    errors: [],
    steps: { learn: "pending", merge: "pending", decay: "pending", prune: "pending" },
    resumed: 0,
  };
}

type Claim = { kind: "done"; row: RunRow } | { kind: "busy"; row: RunRow } | { kind: "run"; row: RunRow; resumed: boolean };

/** Decides, under the write lock, whether to start, resume or leave the day alone. */
function claim(s: Services, day: string, key: string, force: boolean, model: string | null): Claim {
  const sql = s.store.sqlite;
  return sql
    .transaction((): Claim => {
      const last = sql.query<RunRow, [string]>("SELECT * FROM nightly_runs WHERE day = ? ORDER BY id DESC LIMIT 1").get(day);
      const now = s.now();
      if (last && last.status === "running" && ownerAlive(s, last, key)) return { kind: "busy", row: last };
      if (last && !force && last.status === "done") return { kind: "done", row: last };
      if (last && !force) {
        // A crashed ("running", owner gone) or partial run: pick up where it stopped.
        const digest = JSON.parse(last.digest) as NightlyDigest;
        const cursor = JSON.parse(last.cursor) as NightlyCursor;
        if (digest.steps.learn === "incomplete") {
          digest.steps.learn = "pending";
          digest.skipped = digest.skipped.filter((x) => x.step !== "learn");
          // New learnings may duplicate older ones: look for near-duplicates again.
          digest.steps.merge = "pending";
          delete cursor.merge;
        }
        digest.status = "running";
        digest.finished_at = null;
        digest.model = model ?? digest.model;
        digest.resumed++;
        const row = { ...last, status: "running", owner: OWNER, heartbeat_at: now, digest: JSON.stringify(digest), cursor: JSON.stringify(cursor) };
        sql.run("UPDATE nightly_runs SET status = 'running', owner = ?, heartbeat_at = ?, finished_at = NULL, digest = ?, cursor = ? WHERE id = ?", [OWNER, now, row.digest, row.cursor, row.id]);
        return { kind: "run", row, resumed: true };
      }
      const digest = newDigest(day, now, force, model, s.config.nightly.maxModelCalls);
      const id = sql
        .query<{ id: number }, [string, number, string, number, number, string]>(
          "INSERT INTO nightly_runs(day, status, forced, owner, started_at, heartbeat_at, digest) VALUES (?, 'running', ?, ?, ?, ?, ?) RETURNING id",
        )
        .get(day, force ? 1 : 0, OWNER, now, now, JSON.stringify(digest))!.id;
      digest.run_id = id;
      sql.run("UPDATE nightly_runs SET digest = ? WHERE id = ?", [JSON.stringify(digest), id]);
      return { kind: "run", row: { id, day, status: "running", owner: OWNER, heartbeat_at: now, finished_at: null, cursor: "{}", digest: JSON.stringify(digest) }, resumed: false };
    })
    .immediate();
}

/**
 * The nightly consolidation of one day: learnings from the model, then
 * near-duplicate merging, decay of ignored memories and pruning. Idempotent
 * per day (a finished day is left alone unless `force`), resumable (every
 * unit of work commits with its progress), capped in model calls, and
 * useful without a model (the other steps still run; the digest says what
 * was skipped).
 */
export async function runNightly(s: Services, opts: NightlyOptions = {}): Promise<NightlyOutcome> {
  const day = opts.day === undefined ? defaultDay(s.now()) : parseDay(opts.day, s.now());
  const key = `${s.store.file}#${day}`;
  if (active.has(key)) return { ran: false, message: `the nightly run for ${day} is already in progress in this process`, digest: null };
  const llm = createLlmClient(s.config.llm);
  const model = llm?.label ?? null;
  const window = Date.parse(`${day}T00:00:00Z`);
  let row: RunRow | null = null;
  let digest: NightlyDigest;
  let cursor: NightlyCursor = {};
  if (opts.dryRun) {
    digest = { ...newDigest(day, s.now(), opts.force === true, model, s.config.nightly.maxModelCalls), status: "dry-run" };
  } else {
    const c = claim(s, day, key, opts.force === true, model);
    if (c.kind === "done") {
      return { ran: false, message: `${day} was already consolidated (run ${c.row.id}, finished ${isoTime(c.row.finished_at ?? 0)}); use --force to run it again`, digest: JSON.parse(c.row.digest) };
    }
    if (c.kind === "busy") {
      return { ran: false, message: `a nightly run for ${day} is in progress (${c.row.owner}, last report ${isoTime(c.row.heartbeat_at)})`, digest: JSON.parse(c.row.digest) };
    }
    row = c.row;
    digest = JSON.parse(row.digest);
    cursor = JSON.parse(row.cursor);
    if (c.resumed) opts.progress?.({ day, step: "learn", message: `resuming run ${row.id} (${STEPS.filter((st) => digest.steps[st] === "done").join(", ") || "nothing"} already done)` });
  }
  const runId = row?.id ?? null;
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
    save() {
      if (runId === null) return;
      s.store.sqlite.run("UPDATE nightly_runs SET cursor = ?, digest = ?, heartbeat_at = ? WHERE id = ?", [JSON.stringify(cursor), JSON.stringify(digest), s.now(), runId]);
    },
    checkpoint() {
      if (opts.signal?.aborted) throw new NightlyInterrupted(day);
    },
  };
  active.add(key);
  try {
    // A store that grew a lot since its calibration is measured again before merging by similarity.
    if (!ctx.dryRun) await ensureCalibration(s).catch((e) => s.log("warn", `calibration failed: ${(e as Error).message}; thresholds unchanged`));
    for (const step of STEPS) {
      if (digest.steps[step] !== "pending") continue;
      ctx.progress(step, "starting");
      if (step === "learn") await learnStep(ctx, llm);
      else if (step === "merge") await mergeStep(ctx);
      else if (step === "decay") decayStep(ctx);
      else await pruneStep(ctx);
    }
    if (!ctx.dryRun) digest.status = digest.steps.learn === "incomplete" ? "partial" : "done";
    digest.finished_at = isoTime(s.now());
    if (runId !== null) {
      s.store.sqlite.transaction(() => {
        ctx.save();
        s.store.sqlite.run("UPDATE nightly_runs SET status = ?, finished_at = ? WHERE id = ?", [digest.status, s.now(), runId]);
      })();
    }
  } finally {
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
    `${d.model_calls}/${counted(d.max_model_calls, "model call")}`,
  ];
  const skipped = d.skipped.map((x) => `skipped ${x.step}${x.memories ? ` (${counted(x.memories, "memory", "memories")})` : ""}: ${x.reason}`);
  return `nightly ${d.day} ${d.status}: ${parts.join(", ")}${skipped.length ? `; ${skipped.join("; ")}` : ""}`;
}

/** The last `n` runs, newest first (the dashboard's nightly digest). */
export function latestDigests(s: Services, n = 7): NightlyDigest[] {
  return s.store.sqlite
    .query<{ id: number; status: string; digest: string }, [number]>("SELECT id, status, digest FROM nightly_runs ORDER BY id DESC LIMIT ?")
    .all(Math.max(1, Math.min(100, Math.floor(n))))
    .map((r) => ({ ...(JSON.parse(r.digest) as NightlyDigest), run_id: r.id, status: r.status as NightlyDigest["status"] }));
}

/**
 * Days whose last run is partial (learnings owed: no model was configured,
 * or it failed), back to NIGHTLY_OWED_DAYS, oldest first.
 */
export function owedDays(s: Services): string[] {
  const since = isoDate(s.now() - NIGHTLY_OWED_DAYS * DAY_MS);
  return s.store.sqlite
    .query<{ day: string }, [string]>(
      "SELECT day FROM nightly_runs r WHERE day >= ? AND id = (SELECT max(id) FROM nightly_runs WHERE day = r.day) AND status = 'partial' ORDER BY day",
    )
    .all(since)
    .map((r) => r.day);
}

/**
 * Days the schedule should run, oldest first: yesterday, plus recent days
 * with no finished run (the server was down that night, or a run crashed),
 * plus, once a language model is configured, older days whose learnings
 * are still owed.
 */
export function daysToRun(s: Services): string[] {
  const now = s.now();
  const days = new Set<string>(createLlmClient(s.config.llm) ? owedDays(s) : []);
  for (let back = NIGHTLY_CATCHUP_DAYS; back >= 1; back--) {
    const day = isoDate(now - back * DAY_MS);
    const last = s.store.sqlite.query<{ status: string }, [string]>("SELECT status FROM nightly_runs WHERE day = ? ORDER BY id DESC LIMIT 1").get(day);
    if (back === 1 || !last || last.status !== "done") days.add(day);
  }
  return [...days].sort();
}
