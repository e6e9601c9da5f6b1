/**
 * Token counts of what memsvc puts into an agent's context, with a real BPE
 * tokenizer (gpt-tokenizer's o200k_base: the vocabulary ships inside the
 * package, nothing is fetched). Claude's and Gemini's tokenizers are not
 * public; o200k_base is the current OpenAI one and lands within a few percent
 * of them on English and code, far closer than characters / 4.
 *
 * Loading the vocabulary takes ~1 s of the thread (2-3 s from source), so
 * the server loads it at its first lull in traffic (cli/server.ts), never on
 * a prompt's path: until then a line's budget cost is its UTF-8 byte count,
 * an upper bound of its tokens (every token covers at least one byte), so a
 * budget still holds; receipts count exactly when they are written.
 */

type Counter = (text: string) => number;

let counter: Counter | null = null;
let loading: Promise<Counter> | null = null;

/** Starts loading the vocabulary (idempotent); resolves when counting is possible. */
export function warmTokenizer(): Promise<Counter> {
  if (counter) return Promise.resolve(counter);
  loading ??= import("gpt-tokenizer/encoding/o200k_base").then((m) => {
    counter = (text: string) => m.countTokens(text);
    return counter;
  });
  return loading;
}

/** Tokens in `text` (loads the vocabulary on first use). */
export async function countTokens(text: string): Promise<number> {
  return (counter ?? (await warmTokenizer()))(text);
}

const LINE_CACHE_MAX = 4096;
const lineCache = new Map<string, number>();

/**
 * What one line of a block costs against the budget, remembered (the same
 * memories come back prompt after prompt; counting a 40-token line costs
 * ~50 µs). Each part is counted with the newline that ends it: the
 * tokenizer's pre-split keeps a newline with the text before it, so the
 * parts of a block add up to at least the block's own count (bench/recall.ts
 * checks every block). Before the vocabulary is loaded: the UTF-8 byte
 * count, never remembered.
 */
export function lineTokens(line: string): number {
  const hit = lineCache.get(line);
  if (hit !== undefined) {
    // Refresh: least recently used out.
    lineCache.delete(line);
    lineCache.set(line, hit);
    return hit;
  }
  if (!counter) return Buffer.byteLength(line, "utf8");
  const n = counter(line);
  if (lineCache.size >= LINE_CACHE_MAX) lineCache.delete(lineCache.keys().next().value!);
  lineCache.set(line, n);
  return n;
}
