import { createHash } from "node:crypto";
import { redact } from "../secrets";
import { countTokens } from "../tokenizer";
import type { Services } from "../services";
import { RECEIPT_FLUSH_MAX, RECEIPT_FLUSH_MS, RECEIPT_PROMPT_CHARS, RECEIPT_PRUNE_EVERY_MS, RECEIPT_WRITE_SLICE } from "./tuning";
import { gistOf } from "./gist";
import type { NewReceipt, ReceiptDrop, ReceiptMemory } from "./types";

const DAY_MS = 86_400_000;

/** Resolves after the event loop has run what waits (timers, sockets): setImmediate, not a microtask. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A memory of a pending receipt: with `content` instead of a gist when the hot path had none to hand. */
export type PendingMemory<T extends ReceiptMemory> = Omit<T, "gist"> & ({ gist: string; content?: undefined } | { gist?: undefined; content: string });

/** A receipt as the hot path hands it over: the prompt still raw (redacting it costs milliseconds). */
export type PendingReceipt = Omit<NewReceipt, "prompt" | "promptHash" | "injected" | "dropped"> & {
  injected: PendingMemory<ReceiptMemory>[];
  dropped: PendingMemory<ReceiptDrop>[];
  rawPrompt: string;
  /** Text whose tokens the writer counts into `tokens` (a search answer: counting it is not the caller's to wait for). */
  countText?: string;
};

/**
 * Receipts queue here and are written in batches, like group commit: a
 * prompt's answer never waits for its receipt. The queue is flushed after
 * RECEIPT_FLUSH_MS (or at RECEIPT_FLUSH_MAX), before any read of receipts,
 * and at shutdown (the pending flush is a tracked write). A failed batch is
 * logged and dropped: a receipt is a record, never a reason to fail recall.
 */
export class ReceiptWriter {
  private queue: PendingReceipt[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private settle: (() => void) | null = null;
  private lastPrune = 0;

  constructor(private readonly s: Services) {}

  add(r: PendingReceipt): void {
    this.queue.push(r);
    if (!this.settle) {
      // Shutdown (Services.drain) waits for the queued receipts to be written.
      this.s.track(new Promise<void>((resolve) => (this.settle = resolve)));
    }
    if (this.queue.length >= RECEIPT_FLUSH_MAX) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), RECEIPT_FLUSH_MS);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queue;
    const settle = this.settle;
    this.queue = [];
    this.settle = null;
    this.flushing = this.flushing.then(() => this.write(batch)).finally(() => settle?.());
    return this.flushing;
  }

  private async write(batch: PendingReceipt[]): Promise<void> {
    const { config, storage, log } = this.s;
    try {
      if (batch.length > 0) {
        // A slice at a time, each its own turn of the event loop: a request that arrives meanwhile
        // waits for one slice (~1 ms a receipt at 100k), not for the whole batch (~20 ms for 20).
        for (let from = 0; from < batch.length; from += RECEIPT_WRITE_SLICE) {
          if (from > 0) await nextTurn();
          const rows: NewReceipt[] = [];
          for (const { rawPrompt, countText, ...r } of batch.slice(from, from + RECEIPT_WRITE_SLICE)) {
            const promptHash = createHash("sha256").update(rawPrompt).digest("hex");
            const prompt =
              config.recall.receiptPrompt === "hash" ? null : (await redact(rawPrompt.slice(0, RECEIPT_PROMPT_CHARS * 2))).slice(0, RECEIPT_PROMPT_CHARS);
            const tokens = countText === undefined ? r.tokens : await countTokens(countText);
            rows.push({ ...r, tokens, prompt, promptHash, injected: r.injected.map(settled), dropped: r.dropped.map(settled) });
          }
          await storage.receipts.addReceipts(rows);
        }
      }
      const now = this.s.now();
      if (now - this.lastPrune >= RECEIPT_PRUNE_EVERY_MS) {
        this.lastPrune = now;
        await storage.receipts.prune(now - config.recall.receiptDays * DAY_MS, config.recall.receiptMax);
      }
    } catch (e) {
      log("warn", `receipts: ${batch.length} not written: ${(e as Error).message}`);
    }
  }
}

function settled<T extends ReceiptMemory>(m: PendingMemory<T>): T {
  const { content, ...rest } = m;
  return { ...rest, gist: m.gist ?? gistOf(content ?? "") } as T;
}

function writerOf(s: Services): ReceiptWriter {
  const root = s.state.root;
  return (root.state.receiptWriter ??= new ReceiptWriter(root));
}

/** Queues a receipt (nothing when config turns receipts off). */
export function recordReceipt(s: Services, r: PendingReceipt): void {
  if (!s.config.recall.receipts) return;
  writerOf(s).add(r);
}

/** Writes whatever waits: reads of receipts call it first, so they see every answer given so far. */
export function flushReceipts(s: Services): Promise<void> {
  return s.state.root.state.receiptWriter?.flush() ?? Promise.resolve();
}
