import { expect, test } from "bun:test";
import { getMeta } from "../../src/db";
import { ingestMemory } from "../../src/core/memories";
import { runReembed } from "../../src/core/reembed";
import { search } from "../../src/core/search";
import { hashEmbed } from "../../src/embed/fallback";
import type { EmbedKind, Embedder } from "../../src/embed/types";
import { makeServices } from "../helpers/services";

/** A second vector space: the hashed vector reversed, so spaces differ but stay comparable within themselves. */
class OtherSpace implements Embedder {
  readonly id = "test:reversed-v1";
  readonly kind = "fallback" as const;
  readonly description = "test space";
  calls = 0;
  async embed(texts: string[], _kind: EmbedKind) {
    this.calls++;
    return texts.map((t) => hashEmbed(t).reverse());
  }
}

test("a changed embedder re-embeds stored vectors in resumable batches and search uses only the new space", async () => {
  const first = makeServices();
  const home = first.config.home;
  for (let i = 0; i < 80; i++) await ingestMemory(first, { content: `note ${i}: service ${i % 9} uses port ${8000 + i}` });
  expect(getMeta(first.store, "embedder_id")).toBe("fallback:hash-v1");
  await first.close();

  const other = new OtherSpace();
  const second = makeServices({ home, embedder: other });
  expect(getMeta(second.store, "embedder_id")).toBe(other.id);
  expect(getMeta(second.store, "reembed_cursor")).toBe("0");
  // Until re-embedded, vectors of the old space are not in the index.
  expect(second.index.size).toBe(0);
  const abort = new AbortController();
  const origEmbed = other.embed.bind(other);
  other.embed = async (texts, kind) => {
    const out = await origEmbed(texts, kind);
    if (other.calls === 2) abort.abort(); // "crash" after two batches
    return out;
  };
  await runReembed(second, abort.signal);
  const cursor = Number(getMeta(second.store, "reembed_cursor"));
  expect(cursor).toBeGreaterThan(0);
  expect(second.index.size).toBe(64);
  await second.close();

  // Restart: the index holds only the redone part, the job resumes from the cursor.
  const third = makeServices({ home, embedder: new OtherSpace() });
  expect(third.index.size).toBe(64);
  await runReembed(third);
  expect(getMeta(third.store, "reembed_cursor")).toBeNull();
  expect(third.index.size).toBe(80);
  const stored = third.store.sqlite.query<{ e: Uint8Array }, []>("SELECT embedding e FROM memory_vec ORDER BY rowid LIMIT 1").get()!.e;
  const expected = hashEmbed("note 0: service 0 uses port 8000").reverse();
  expect(Array.from(new Float32Array(stored.buffer, stored.byteOffset, 384))).toEqual(Array.from(expected));
  const r = await search(third, { query: "service 3 port 8030" });
  expect(r.results[0].content).toContain("8030");
  expect(r.results[0].matched_by).toContain("vector");
  await third.close();
});
