import { existsSync, readdirSync, statSync } from "node:fs";
import { serverFetch } from "../server-client";
import { basename, join, resolve } from "node:path";
import type { Config } from "../config";
import { CAPTURE_SEGMENT_MAX_CHARS } from "./tuning";
import { updateBacklog, waitReason, type WaitingSession } from "./backlog";
import { FORMAT_READERS } from "./harnesses";
import { commitAt, repoInfo, repoRelative, type RepoInfo } from "./git";
import { rememberRepo } from "./stale";
import { reportUses } from "./use";
import { planSegments, type Segment } from "./segments";
import { detectFormat, headOf, readJsonl, type Format, type Line } from "./transcript";
import { readState, stateDir, writeState, type SessionState } from "./watermark";
import { NotUtf8Error } from "../utf8";

export interface Transcript {
  path: string;
  format?: Format;
  /** `source_agent` for its segments (the harness, see sourceAgentFor); config.sourceAgent when absent. */
  agent?: string;
}

export interface CaptureOptions {
  config: Config;
  transcripts: Transcript[];
  dryRun?: boolean;
  /** Per /distill request: the server may make several model calls for one segment. */
  postTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface SessionReport {
  file: string;
  sessionId: string;
  project: string | null;
  status: "sent" | "up to date" | "failed" | "dry run";
  segments: number;
  sent: number;
  memories: number;
  dropped: number;
  /** Transcript bytes covered by this run, and request bytes they became. */
  bytesIn: number;
  bytesSent: number;
  error?: string;
}

export interface CaptureResult {
  reports: SessionReport[];
  /** True when something could not be sent (it will be retried next run). */
  failed: boolean;
}

const DEFAULT_POST_TIMEOUT_MS = 15 * 60_000;

/** Claude Code keeps one JSONL per session in ~/.claude/projects/<project dir>/; oldest first. */
export function findTranscripts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const files: string[] = [];
  const visit = (d: string, depth: number) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isFile() && entry.name.endsWith(".jsonl")) files.push(p);
      else if (entry.isDirectory() && depth < 1) visit(p, depth + 1);
    }
  };
  visit(dir, 0);
  return files
    .map((f) => ({ f, t: statSync(f).mtimeMs }))
    .sort((a, b) => a.t - b.t)
    .map((x) => x.f);
}

/** What one transcript has to send: resent pending segments first, then the new delta. */
export function planTranscript(file: string, format: Format, state: SessionState | null, maxChars = CAPTURE_SEGMENT_MAX_CHARS) {
  const reader = FORMAT_READERS[format];
  const size = statSync(file).size;
  // A transcript shorter than its watermark was rewritten: read it again (segment ids carry a content hash).
  const fresh = !state || size < state.offset;
  const offset = fresh ? 0 : state.offset;
  const pending = fresh ? [] : state.pending.filter((p) => p.end <= size && p.start >= offset);
  const segments: Segment[] = [];
  const seen: Line[] = [];
  for (const p of pending) {
    const { lines } = readJsonl(file, reader, p.start, p.end);
    seen.push(...lines);
    const [seg] = planSegments(lines, p.start, Number.MAX_SAFE_INTEGER).segments;
    if (seg) segments.push({ ...seg, end: p.end, id: p.id });
  }
  const from = pending.length ? pending[pending.length - 1].end : offset;
  const { lines } = readJsonl(file, reader, from);
  seen.push(...lines);
  const planned = planSegments(lines, from, maxChars);
  segments.push(...planned.segments);
  const first = <K extends "sessionId" | "cwd">(k: K) => seen.find((l) => l[k])?.[k] ?? null;
  const cwd = first("cwd");
  return {
    segments,
    cwd,
    /** Every line read (pending segments and the new delta): use detection reads the agent's turns in them. */
    lines: seen,
    tailEnd: Math.max(planned.tailEnd, from),
    offset,
    bytesIn: Math.max(planned.tailEnd, from) - offset,
    sessionId: state && !fresh ? state.sessionId : (first("sessionId") ?? basename(file).replace(/\.jsonl$/, "")),
    project: state && !fresh && state.project ? state.project : cwd ? basename(cwd.replace(/[\\/]+$/, "")) || null : null,
  };
}

/** Bounds as the server checks them (core/memories/tuning.ts ANCHOR_MAX_PATHS): the first paths a segment touched. */
const MAX_ANCHOR_PATHS = 200;

/**
 * The segment's anchor: its repository, branch, the commit HEAD was at when
 * its last line was written, and the files its tool calls named inside the
 * repository. Null when the session ran outside a repository or touched no file.
 */
export function segmentAnchors(info: RepoInfo | null, cwd: string | null, seg: Segment): Record<string, unknown> | null {
  if (!info) return null;
  const paths = [
    ...new Set(seg.paths.map((p) => repoRelative(info.root, cwd, p)).filter((p): p is string => p !== null && p.length <= 500 && !p.split("/").includes(".."))),
  ].slice(0, MAX_ANCHOR_PATHS);
  const commit = commitAt(info, seg.endDate);
  if (paths.length === 0 || !commit) return null;
  return { repo: info.repo, branch: info.branch, commit, paths };
}

export function distillBody(
  config: Config,
  sessionId: string,
  project: string | null,
  seg: Segment,
  agent?: string,
  anchors: Record<string, unknown> | null = null,
): Record<string, unknown> {
  const body: Record<string, unknown> = { messages: seg.messages, session_id: sessionId, segment_id: seg.id, source_agent: agent ?? config.sourceAgent };
  if (seg.date) body.session_date = seg.date;
  if (config.agentId) body.source_agent_id = config.agentId;
  if (config.sourceDomain) body.source_domain = config.sourceDomain;
  if (project) body.project = project;
  if (anchors) body.anchors = anchors;
  return body;
}

type PostOutcome = { ok: true; json: any } | { ok: false; status: number | null; message: string };

async function post(config: Config, body: string, timeoutMs: number): Promise<PostOutcome> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  try {
    // serverFetch adds the home's token: a remote server needs it, and so does a local one whose bypass is off.
    const res = await serverFetch(config, "/distill", { method: "POST", headers, body, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* reported below */
    }
    if (res.ok) return { ok: true, json };
    return { ok: false, status: res.status, message: json?.error?.message ?? `HTTP ${res.status}` };
  } catch (e) {
    return { ok: false, status: null, message: `no server answers at ${config.serverUrl} (${(e as Error).message})` };
  }
}

/**
 * Ships every transcript's unseen delta. The watermark moves only past
 * segments the server acknowledged; a 503 or an unreachable server stops the
 * run (nothing else would get through either) and the next run resends.
 */
export async function capture(opts: CaptureOptions): Promise<CaptureResult> {
  const { config } = opts;
  const dir = stateDir(config.home);
  const log = opts.log ?? (() => {});
  const reports: SessionReport[] = [];
  let stopAll = false;
  // Which sessions now wait for the model or the server (backlog.ts), and which went through.
  const waiting: Omit<WaitingSession, "since">[] = [];
  const done: string[] = [];
  let stoppedBy: { reason: NonNullable<ReturnType<typeof waitReason>>; message: string } | null = null;
  for (const t of opts.transcripts) {
    const file = resolve(t.path);
    if (stopAll) {
      // Not tried: it waits for the same reason as the session that stopped the run, if it has anything new.
      const st = readState(dir, file);
      if (stoppedBy && ((st?.pending.length ?? 0) > 0 || (st?.offset ?? 0) < statSync(file).size))
        waiting.push({ file, format: t.format ?? null, agent: t.agent ?? null, ...stoppedBy });
      continue;
    }
    const state = readState(dir, file);
    const size = statSync(file).size;
    if (state && state.pending.length === 0 && state.offset === size) {
      done.push(file);
      continue;
    }
    const format = t.format ?? detectFormat(headOf(file));
    let plan: ReturnType<typeof planTranscript>;
    try {
      plan = planTranscript(file, format, state);
    } catch (e) {
      if (!(e instanceof NotUtf8Error)) throw e;
      // This file only: nothing of it is sent, its watermark stays, the other transcripts go on.
      const sessionId = state?.sessionId ?? basename(file).replace(/\.jsonl?$/, "");
      reports.push({
        file,
        sessionId,
        project: state?.project ?? null,
        status: "failed",
        segments: 0,
        sent: 0,
        memories: 0,
        dropped: 0,
        bytesIn: 0,
        bytesSent: 0,
        error: `${e.message}; skipped`,
      });
      log(`${e.message}; skipped`);
      continue;
    }
    const report: SessionReport = {
      file,
      sessionId: plan.sessionId,
      project: plan.project,
      status: "up to date",
      segments: plan.segments.length,
      sent: 0,
      memories: 0,
      dropped: 0,
      bytesIn: plan.bytesIn,
      bytesSent: 0,
    };
    reports.push(report);
    // Only when a segment named a file: a chat-only session costs no git call.
    const info = plan.segments.some((seg) => seg.paths.length > 0) && plan.cwd ? repoInfo(plan.cwd) : null;
    if (info && !opts.dryRun) rememberRepo(config.home, info.repo, info.root);
    const bodies = plan.segments.map((seg) =>
      JSON.stringify(distillBody(config, plan.sessionId, plan.project, seg, t.agent, segmentAnchors(info, plan.cwd, seg))),
    );
    if (opts.dryRun) {
      report.status = "dry run";
      report.bytesSent = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);
      continue;
    }
    const next: SessionState = {
      file,
      sessionId: plan.sessionId,
      project: plan.project,
      offset: plan.offset,
      pending: plan.segments.map((s) => ({ start: s.start, end: s.end, id: s.id })),
      updatedAt: "",
    };
    writeState(dir, next);
    for (let i = 0; i < plan.segments.length; i++) {
      const seg = plan.segments[i];
      const res = await post(config, bodies[i], opts.postTimeoutMs ?? DEFAULT_POST_TIMEOUT_MS);
      if (!res.ok) {
        report.status = "failed";
        report.error = res.status === null ? res.message : `HTTP ${res.status}: ${res.message}`;
        // 503 (no model, model down) and no server: every other request would fail the same way.
        if (res.status === null || res.status >= 500) stopAll = true;
        const reason = waitReason(res.status, res.message);
        if (reason) {
          stoppedBy = { reason, message: report.error };
          waiting.push({ file, format: t.format ?? null, agent: t.agent ?? null, ...stoppedBy });
        }
        log(`${plan.sessionId}: segment ${seg.id} not accepted (${report.error}); it is retried next run`);
        break;
      }
      report.sent++;
      report.bytesSent += Buffer.byteLength(bodies[i]);
      report.memories += Array.isArray(res.json?.ids) ? res.json.ids.length : 0;
      report.dropped += Array.isArray(res.json?.dropped) ? res.json.dropped.length : 0;
      next.offset = seg.end;
      next.pending.shift();
      writeState(dir, next);
    }
    // Whether the agent relied on what recall injected (use.ts); never fails the capture.
    if (!stopAll) await reportUses(config, plan.sessionId, plan.lines, log);
    if (report.status !== "failed") {
      // Lines after the last segment that carried nothing (tool noise, meta) need no request.
      if (next.pending.length === 0 && plan.tailEnd > next.offset) {
        next.offset = plan.tailEnd;
        writeState(dir, next);
      }
      report.status = report.sent > 0 ? "sent" : "up to date";
      done.push(file);
    }
  }
  if (!opts.dryRun) updateBacklog(config.home, waiting, done);
  return { reports, failed: reports.some((r) => r.status === "failed") };
}
