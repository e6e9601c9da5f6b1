import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { calibrationDue, ensureCalibration, thresholds, type Thresholds } from "../../../../src/core/search";
import { insertMemoryRows } from "../../../../src/core/ingest";
import { recallIndex } from "../../../../src/core/recall";
import { OnnxEmbedder } from "../../../../src/embed";
import { THRESHOLD_DEFAULTS } from "../../../../src/core/search/calibration-tuning";
import { makeServices, type TestServices } from "../../../helpers/services";
import { withStorage } from "../../../../src/core/storage";
import { dbRows } from "../../../helpers/engine";
import { makeTinyModel } from "../../../helpers/tiny-model";

/**
 * Two generated ONNX models through the real runtime: one whose texts are
 * near-orthogonal (unrelated pairs ~0), one with a shared component that puts
 * every cosine high. The thresholds must follow each model's spread, and
 * gating must behave the same under both.
 */
const TOPICS = [
  "database sql sqlite postgres table index query",
  "stock market price bank money trade economy",
  "rain weather sun snow cold wind storm",
  "cat dog kitten puppy pet bird horse",
  "food bread apple coffee tea dinner cook",
  "python typescript rust java compiler function class",
  "house home garden park tree room kitchen",
  "user team project meeting deploy release config",
];
const FILLER = "one two three four five six seven eight nine ten first second last new old big small".split(" ");

/** 240 memories: each mixes three words of one topic with filler, deterministic. */
function corpus(): string[] {
  const out: string[] = [];
  for (let i = 0; i < 240; i++) {
    const words = TOPICS[i % TOPICS.length].split(" ");
    const round = Math.floor(i / TOPICS.length);
    const pick = (k: number) => words[(round + k * (1 + (round % 3))) % words.length];
    out.push(`${pick(0)} ${pick(1)} ${pick(2)} ${FILLER[round % FILLER.length]} ${FILLER[(round * 5 + 3) % FILLER.length]}`);
  }
  return out;
}

const RELEVANT = "postgres database cache log file fix";
const PROMPT = "postgres cache log file fix?";
// Texts as long as the stored ones: in the biased model a longer text leans further into the shared direction.
const UNRELATED = "kitten puppy sofa sunny garden";

let root: string;
const models: { name: string; bias: number; s?: TestServices; t?: Thresholds }[] = [
  { name: "test/tiny-flat", bias: 0 },
  { name: "test/tiny-biased", bias: 0.35 },
];
const cos = (a: Float32Array, b: Float32Array) => a.reduce((x, v, i) => x + v * b[i]!, 0);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memsvc-calibration-"));
  for (const m of models) {
    const modelsDir = await makeTinyModel(join(root, "models"), m.name, { bias: m.bias });
    const embedder = await OnnxEmbedder.load({ model: m.name, modelsDir, allowDownload: false });
    const s = makeServices({ embedder });
    const texts = [...corpus(), RELEVANT];
    const vectors = await embedder.embed(texts, "document");
    const rows = await insertMemoryRows(
      s,
      texts.map((content) => ({ content, memoryType: "knowledge" as const, project: "p", sourceAgent: "test", createdAt: Date.now() })),
      vectors,
    );
    rows.forEach((r, i) => {
      s.index.upsert(r.seq, vectors[i], "p");
    });
    m.s = s;
  }
}, 60_000);

afterAll(async () => {
  for (const m of models) await m.s?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("calibration of embedder thresholds", () => {
  test("before calibration the kind's documented defaults apply; afterwards measured ones, stored with the embedder id", async () => {
    for (const m of models) {
      const s = m.s!;
      expect(thresholds(s)).toMatchObject({ source: "default", ...THRESHOLD_DEFAULTS.onnx });
      expect(await calibrationDue(s)).toBe(true);
      m.t = await ensureCalibration(s);
      expect(m.t.source).toBe("calibrated");
      expect(await calibrationDue(s)).toBe(false);
      const rows = await dbRows(s, "SELECT embedder_id, memories FROM embedder_calibration");
      expect(rows).toEqual([{ embedder_id: s.embedder.id, memories: 241 }]);
    }
  });

  test("a transaction's view of the services reads the calibrated thresholds at once (links made on ingest use them)", () => {
    for (const m of models) {
      const s = m.s!;
      const view = withStorage(s, s.storage);
      expect(thresholds(view)).toEqual(m.t!);
      expect(thresholds(withStorage(view, s.storage))).toEqual(m.t!);
    }
  });

  test("the derived thresholds follow each model's similarity spread", () => {
    const [flat, biased] = models.map((m) => m.t!);
    for (const name of ["vectorMin", "recall", "link", "distillMerge", "nightlyMerge", "topicUnrelated"] as const) {
      expect(biased[name]).toBeGreaterThan(flat[name]);
    }
    // Ordered as the defaults are, inside each model's own space.
    for (const t of [flat, biased]) {
      expect(t.vectorMin).toBeLessThan(t.link);
      expect(t.link).toBeLessThan(t.distillMerge);
      expect(t.distillMerge).toBeLessThan(t.nightlyMerge);
      expect(t.nightlyMerge).toBeLessThan(1);
    }
  });

  test("gating is equivalent: a relevant memory passes and an unrelated one does not, under both models", async () => {
    const crossed: number[] = [];
    for (const m of models) {
      const s = m.s!;
      const [p] = await s.embedder.embed([PROMPT], "query");
      const [rel, unrel] = await s.embedder.embed([RELEVANT, UNRELATED], "document");
      // At the vector level: the relevant text is above the vector floor, the unrelated one below the link threshold.
      expect(cos(p, rel)).toBeGreaterThan(m.t!.recall);
      expect(cos(p, unrel)).toBeLessThan(m.t!.link);
      crossed.push(cos(p, unrel));
      const hit = (await recallIndex(s, { session_id: "a", prompt: PROMPT, project: "p" })) as { block: string | null };
      expect(hit.block).toContain(RELEVANT);
      expect(await recallIndex(s, { session_id: "b", prompt: UNRELATED, project: "p" })).toMatchObject({ block: null });
    }
    // The biased model's unrelated pair sits well above the flat model's floors: one model's constants do not transfer.
    expect(crossed[1]).toBeGreaterThan(models[0].t!.recall);
    expect(crossed[1]).toBeGreaterThan(models[0].t!.topicUnrelated);
  });

  test("a store that grew well past its measure is due again; a new embedder id has no calibration", async () => {
    const s = models[0].s!;
    await dbRows(s, "UPDATE embedder_calibration SET memories = 100");
    expect(await calibrationDue(s)).toBe(true);
    await ensureCalibration(s);
    expect(await calibrationDue(s)).toBe(false);
    await dbRows(s, "UPDATE embedder_calibration SET embedder_id = 'onnx:other:q8'");
    expect(await calibrationDue(s)).toBe(true);
  });
});
