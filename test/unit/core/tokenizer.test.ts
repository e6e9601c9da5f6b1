import { describe, expect, test } from "bun:test";
import { countTokens, lineTokens, warmTokenizer } from "../../../src/core/tokenizer";

describe("tokens", () => {
  test("counted by the BPE tokenizer, not characters / 4", async () => {
    expect(await countTokens("hello world")).toBe(2);
    // 44 characters of one repeated letter: characters / 4 says 11.
    expect(await countTokens("a".repeat(44))).not.toBe(11);
  });

  test("a block's newline-ended parts add up to at least the block's own count", async () => {
    await warmTokenizer();
    const lines = [
      "## Memory recall (auto)",
      "- `3f2a9c1b` knowledge, 2026-03-01: The staging Postgres database listens on port 5433 behind pgbouncer.",
      "- `7c1d0e2f` decisions, 2026-03-02 (project web): Production deploys run through `deploy.yml`; see docs/ops.md.",
      "- `0a0b0c0d` experience, 2026-03-03: 東京のサーバーは UTF-8 で — naïve café, emoji 🚀 and `x := y`.",
    ];
    const footer = "_Only an index: load a memory before relying on it._";
    for (let n = 1; n < lines.length; n++) {
      const block = [...lines.slice(0, n + 1), "", footer].join("\n");
      const parts = lines.slice(0, n + 1).reduce((a, l) => a + lineTokens(`${l}\n`), 0) + lineTokens(`\n${footer}`);
      expect(parts).toBeGreaterThanOrEqual(await countTokens(block));
    }
  });
});
