import type { LlmClient } from "../../llm/client";
import { LEARNINGS_PROMPT_OVERHEAD, learningsMessages } from "../../llm/learnings-prompt";
import { isoDate } from "../dates";
import { addLink } from "../graph";
import { liveIndex, type NewMemory } from "../memories";
import { insertMemoryRows } from "../ingest";
import { redact } from "../secrets";
import type { NightlyCursor, RunContext } from "./types";
import type { NightlyDayRow } from "./store";
import { withStorage } from "../storage";
import { MAX_TAGS } from "../memories";
import { NIGHTLY_CHUNK_MAX_MEMORIES, NIGHTLY_MAX_LEARNINGS_PER_CALL, NIGHTLY_MEMORY_MAX_CHARS, NIGHTLY_MIN_LEARNING_CHARS } from "./tuning";
import { counted } from "../text";
import { heldBack } from "./held";

/** How an owed learn step is paid back, in the digest and the CLI. */
export const OWED_HINT = "the next nightly run with a language model configured writes them";

type DayRow = NightlyDayRow;

/** The day's memories (created or updated in it, learnings excluded: no learnings of learnings) after the cursor. */
export function countDay(ctx: RunContext, after: NightlyCursor["learn"] = ["", 0]): Promise<number> {
  return ctx.s.storage.nightly.countDay(ctx.start, ctx.end, after);
}

interface Chunk {
  /** The memories for one model call. */
  rows: DayRow[];
  /** The cursor past this chunk: its last row, or a held-back one after it (null: the day is done). */
  last: [string, number] | null;
  /** Memories feedback holds back that this chunk passed over. */
  held: number;
}

/**
 * The next batch for one model call: one project, within the context budget,
 * in (project, seq) order. Memories feedback holds back are passed over (the
 * cursor moves past them); a chunk may hold only those (no call then).
 */
async function nextChunk(ctx: RunContext, after: [string, number], held: ReadonlySet<string>): Promise<Chunk> {
  const rows = await ctx.s.storage.nightly.dayRows(ctx.start, ctx.end, after, NIGHTLY_CHUNK_MAX_MEMORIES);
  const budget = Math.max(2000, ctx.s.config.llm.contextChars - LEARNINGS_PROMPT_OVERHEAD);
  const out: Chunk = { rows: [], last: null, held: 0 };
  let used = 0;
  for (const r of rows) {
    const sameProject = out.rows.length === 0 || r.pkey === out.rows[0].pkey;
    if (held.has(r.id)) {
      if (!sameProject) break;
      out.held++;
      out.last = [r.pkey, r.seq];
      continue;
    }
    const cost = Math.min(r.content.length, NIGHTLY_MEMORY_MAX_CHARS) + 60;
    if (!sameProject || (out.rows.length > 0 && used + cost > budget)) break;
    out.rows.push(r);
    out.last = [r.pkey, r.seq];
    used += cost;
  }
  return out;
}

interface Learning {
  content: string;
  sources: DayRow[];
  tags: string[];
}

/** The model's answer → grounded learnings; anything without a valid source is rejected. */
export function parseLearnings(answer: unknown, chunk: readonly DayRow[]): { items: Learning[]; rejected: number } {
  const list = Array.isArray(answer) ? answer : answer && typeof answer === "object" ? (answer as Record<string, unknown>).learnings : null;
  if (!Array.isArray(list)) return { items: [], rejected: 0 };
  const items: Learning[] = [];
  let rejected = 0;
  for (const raw of list) {
    const entry = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
    const content = typeof entry.content === "string" ? entry.content.trim() : "";
    const sources = new Map<string, DayRow>();
    for (const ref of Array.isArray(entry.sources) ? entry.sources : []) {
      const row = resolveSource(ref, chunk);
      if (row) sources.set(row.id, row);
    }
    if (content.length < NIGHTLY_MIN_LEARNING_CHARS || sources.size === 0 || items.length >= NIGHTLY_MAX_LEARNINGS_PER_CALL) {
      rejected++;
      continue;
    }
    const tags = (Array.isArray(entry.tags) ? entry.tags : []).filter((t): t is string => typeof t === "string").slice(0, MAX_TAGS);
    items.push({ content: content.slice(0, 4000), sources: [...sources.values()], tags });
  }
  return { items, rejected };
}

/** A source is a 1-based number from the prompt ("3", "[3]", "#3") or an id prefix of a listed memory. */
function resolveSource(ref: unknown, chunk: readonly DayRow[]): DayRow | null {
  const text = typeof ref === "number" ? String(ref) : typeof ref === "string" ? ref.trim().toLowerCase() : "";
  const n = /^\[?#?(\d{1,4})\]?$/.exec(text);
  if (n) return chunk[Number(n[1]) - 1] ?? null;
  if (/^[0-9a-f-]{4,36}$/.test(text)) return chunk.find((r) => r.id.startsWith(text)) ?? null;
  return null;
}

/**
 * Asks the model for learnings, one call per chunk of the day's memories;
 * each chunk's learnings, their derived_from links and the cursor commit
 * together, so a crash never stores a chunk twice or skips one.
 */
export async function learnStep(ctx: RunContext, llm: LlmClient | null): Promise<void> {
  const { s, digest } = ctx;
  const max = digest.max_model_calls;
  if (ctx.cursor.learn === undefined && digest.considered === 0) digest.considered = await countDay(ctx);
  const stop = async (reason: string, state: "done" | "incomplete" | "skipped") => {
    const left = await countDay(ctx, ctx.cursor.learn);
    if (left > 0) digest.skipped.push({ step: "learn", reason, memories: left });
    digest.steps.learn = left > 0 ? state : "done";
    if (!ctx.dryRun) await ctx.save();
  };
  // Owed, not skipped: the day stays partial, and the next run with a model (the schedule, or
  // `memsvc nightly`) writes its learnings; marking it consolidated would lose them for good.
  if (!llm) return stop(`no language model configured (llm.baseURL and llm.model): learnings owed; ${OWED_HINT}`, "incomplete");
  const held = await heldBack(s);
  // A run started by an older version resumes with a digest that lacks the field.
  digest.held_back ??= { learn: 0, merge: 0 };
  if (ctx.dryRun) return planLearn(ctx, held);
  for (;;) {
    ctx.checkpoint();
    const after = ctx.cursor.learn ?? ["", 0];
    const next = await nextChunk(ctx, after, held);
    const chunk = next.rows;
    if (next.last === null) return stop("", "done");
    if (chunk.length === 0) {
      // Only held-back memories: nothing to ask, the cursor moves past them.
      ctx.cursor.learn = next.last;
      digest.held_back.learn += next.held;
      await ctx.save();
      continue;
    }
    if (digest.model_calls >= max) return stop(`model call cap reached (nightly.maxModelCalls = ${max})`, "done");
    const project = chunk[0].project;
    ctx.progress(
      "learn",
      `asking ${llm.label} about ${counted(chunk.length, "memory", "memories")} of ${project ?? "(no project)"}`,
      digest.read,
      digest.considered,
    );
    let answer: unknown;
    // Memories stored before redaction covered every route may still hold a secret: none goes to the model.
    const shown = await Promise.all(
      chunk.map(async (r) => ({
        shortId: r.id.slice(0, 8),
        memoryType: r.memoryType,
        date: isoDate(r.createdAt),
        content: await redact(r.content.slice(0, NIGHTLY_MEMORY_MAX_CHARS)),
      })),
    );
    try {
      answer = await llm.chatJson(learningsMessages(ctx.day, project, shown), { signal: ctx.signal });
    } catch (e) {
      ctx.checkpoint();
      digest.model_calls++;
      digest.errors.push((e as Error).message);
      return stop(`the language model failed: ${(e as Error).message}; run again to resume`, "incomplete");
    }
    digest.model_calls++;
    const { items, rejected } = parseLearnings(answer, chunk);
    for (const l of items) l.content = await redact(l.content);
    const vectors = items.length
      ? await s.embedder.embed(
          items.map((l) => l.content),
          "document",
        )
      : [];
    const now = s.now();
    const rows: NewMemory[] = items.map((l) => ({
      content: l.content,
      memoryType: "learnings",
      project,
      sourceAgent: "nightly",
      sourceSession: `nightly:${ctx.day}`,
      createdAt: now,
      tags: l.tags,
    }));
    // The model was asked above, outside any transaction: this one only writes.
    const before = {
      cursor: ctx.cursor.learn,
      read: digest.read,
      written: digest.written,
      rejected: digest.rejected,
      learnings: digest.learnings.length,
      held: digest.held_back.learn,
    };
    const inserted = await s.storage
      .transaction(async (tx) => {
        const out = await insertMemoryRows(withStorage(s, tx), rows, vectors);
        for (const [i, r] of out.entries()) for (const src of items[i].sources) await addLink(withStorage(s, tx), r.id, src.id, "derived_from", 1);
        ctx.cursor.learn = next.last!;
        digest.held_back!.learn += next.held;
        digest.read += chunk.length;
        digest.written += out.length;
        digest.rejected += rejected;
        digest.learnings.push(...out.map((r) => r.id.slice(0, 8)).slice(0, Math.max(0, 50 - digest.learnings.length)));
        await ctx.save(tx);
        return out;
      })
      .catch((e) => {
        // Rolled back: the progress it counted did not happen.
        ctx.cursor.learn = before.cursor;
        Object.assign(digest, { read: before.read, written: before.written, rejected: before.rejected });
        digest.held_back!.learn = before.held;
        digest.learnings.length = before.learnings;
        throw e;
      });
    // On an engine that searches vectors in the database there is no in-memory index to update.
    const index = liveIndex(s);
    if (index)
      inserted.forEach((r, i) => {
        index.upsert(r.seq, vectors[i], project);
      });
    ctx.progress(
      "learn",
      `${digest.read}/${counted(digest.considered, "memory", "memories")} read, ${counted(digest.written, "learning")} written, ${digest.model_calls}/${counted(max, "model call")}`,
      digest.read,
      digest.considered,
    );
  }
}

/** Dry run: how many memories and calls the learn step would take. */
async function planLearn(ctx: RunContext, held: ReadonlySet<string>): Promise<void> {
  let after: [string, number] = ctx.cursor.learn ?? ["", 0];
  for (;;) {
    const next = await nextChunk(ctx, after, held);
    const chunk = next.rows;
    if (next.last === null) break;
    ctx.digest.held_back!.learn += next.held;
    if (chunk.length === 0) {
      after = next.last;
      continue;
    }
    if (ctx.digest.model_calls >= ctx.digest.max_model_calls) {
      ctx.digest.skipped.push({
        step: "learn",
        reason: `model call cap reached (nightly.maxModelCalls = ${ctx.digest.max_model_calls})`,
        memories: await countDay(ctx, after),
      });
      break;
    }
    ctx.digest.model_calls++;
    ctx.digest.read += chunk.length;
    after = next.last;
  }
  ctx.digest.steps.learn = "done";
}
