import { describe, expect, test } from "bun:test";
import { chunkBudget, chunkText, chunkTranscript, splitText } from "../../../src/llm/chunk";

const msg = (role: string, n: number, tag: string) => ({ role, content: `${tag} ${"word ".repeat(n)}${tag}-end` });

describe("chunking", () => {
  test("short transcripts are one chunk, rendered with their roles", () => {
    expect(chunkTranscript([msg("user", 3, "a"), msg("assistant", 3, "b")], 1000)).toEqual([
      "user: a word word word a-end\n\nassistant: b word word word b-end",
    ]);
  });

  test("chunks never exceed the budget and cut only between messages", () => {
    const messages = Array.from({ length: 50 }, (_, i) => msg(i % 2 ? "assistant" : "user", 20 + (i % 7) * 10, `m${i}`));
    const chunks = chunkTranscript(messages, 1200);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1200);
    for (let i = 0; i < 50; i++) {
      const holder = chunks.filter((c) => c.includes(`m${i} `));
      expect(holder).toHaveLength(1);
      expect(holder[0]).toContain(`m${i}-end`);
    }
    // Nothing lost, nothing repeated, order kept.
    expect(chunks.join("\n\n")).toBe(messages.map((m) => `${m.role}: ${m.content}`).join("\n\n"));
  });

  test("a single message longer than a chunk is split at natural breaks and keeps its speaker", () => {
    const long = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} explains one more step of the migration.`).join(" ");
    const chunks = chunkTranscript([{ role: "assistant", content: long }], 300);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(300);
      expect(c.startsWith("assistant: Sentence number")).toBe(true);
      expect(c.endsWith(".")).toBe(true);
    }
  });

  test("text without breaks is cut hard, losing nothing", () => {
    const blob = "x".repeat(1050);
    const pieces = splitText(blob, 200);
    expect(pieces.join("")).toBe(blob);
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(200);
  });

  test("plain text is chunked on paragraphs", () => {
    const text = Array.from({ length: 10 }, (_, i) => `Paragraph ${i}. ${"lorem ipsum ".repeat(10)}`).join("\n\n");
    const chunks = chunkText(text, 400);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(400);
    expect(chunks.join("\n\n").replace(/\s+/g, " ")).toBe(text.replace(/\s+/g, " ").trim());
  });

  test("empty messages are skipped; a tiny budget is refused", () => {
    expect(chunkTranscript([{ role: "user", content: "  " }], 500)).toEqual([]);
    expect(() => chunkTranscript([], 10)).toThrow(/at least 100/);
  });

  test("the budget leaves room for the prompt and the answer, with a floor", () => {
    expect(chunkBudget(24_000, 3000, 0.25, 2000)).toBe(15_000);
    expect(chunkBudget(4000, 3000, 0.25, 2000)).toBe(2000);
  });
});
