import { describe, expect, test } from "bun:test";
import { lintSource } from "@secretlint/core";
import { secretLintProfiler } from "@secretlint/profiler";
import { rules as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { findSecrets } from "../../../../src/core/secrets/secretlint-host";
import { redactOwn, redactSecrets } from "../../../../src/core/secrets";
import { replaceRanges } from "../../../../src/core/secrets/redact";
import { CORPUS, NEAR_MISSES } from "../../../fixtures/secrets/corpus";
import { ordinaryLines } from "../../../fixtures/secrets/ordinary";

// redact.ts runs secretlint's rules in our own host instead of secretlint's
// engine (lintSource). The host must find exactly what the engine finds:
// compared here, rule by rule and range by range, on every text we have.
secretLintProfiler.setEnabled(false);
const RULES = recommended.filter((r) => !r.meta.id.endsWith("filter-comments"));
const CONFIG = { rules: RULES.map((rule) => ({ id: rule.meta.id, rule, options: {} })) };
const FILE = { filePath: "transcript.txt", ext: ".txt" };

const key4 = (f: { ruleId: string; messageId?: string; range: readonly [number, number] }) => `${f.ruleId} ${f.messageId} ${f.range[0]}-${f.range[1]}`;
async function viaEngine(content: string): Promise<string[]> {
  const r = await lintSource({ source: { content, ...FILE, contentType: "text" }, options: { config: CONFIG as never, noPhysicFilePath: true } });
  return [...new Set(r.messages.map((m) => key4({ ruleId: m.ruleId, messageId: m.messageId, range: m.range })))].sort();
}
async function viaHost(content: string): Promise<string[]> {
  return [...new Set((await findSecrets(RULES, content, FILE)).map(key4))].sort();
}

describe("our secretlint host finds what secretlint's engine finds", () => {
  test("the secret corpus, one line and all lines together", async () => {
    let found = 0;
    for (const c of CORPUS) {
      const engine = await viaEngine(c.text);
      expect({ kind: c.kind, found: await viaHost(c.text) }).toEqual({ kind: c.kind, found: engine });
      found += engine.length;
    }
    // The preset catches a good part of the corpus on its own (our rules do the rest): the comparison compares findings.
    expect(found).toBeGreaterThan(15);
    const all = CORPUS.map((c) => c.text).join("\n");
    expect(await viaHost(all)).toEqual(await viaEngine(all));
  });

  test("near misses and ordinary session lines", async () => {
    const texts = [...CORPUS.map((c) => c.negative), ...NEAR_MISSES, ...ordinaryLines().map((l) => l.line)];
    for (const t of texts) expect({ t, found: await viaHost(t) }).toEqual({ t, found: await viaEngine(t) });
    expect(await viaHost(texts.join("\n"))).toEqual(await viaEngine(texts.join("\n")));
  });

  test("rules that look at the file name see what they are shown", async () => {
    // A service-account JSON is the GCP rule's only in a .json file; in a transcript the private key rule finds the key.
    const key = `-----BEGIN PRIVATE KEY-----\\n${"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC".repeat(5)}\\n-----END PRIVATE KEY-----\\n`;
    const json = JSON.stringify({
      type: "service_account",
      project_id: "p",
      private_key_id: "0123456789abcdef0123456789abcdef01234567",
      private_key: key.replaceAll("\\n", "\n"),
    });
    for (const file of [FILE, { filePath: "key.json", ext: ".json" }]) {
      const engine = await lintSource({
        source: { content: json, ...file, contentType: "text" },
        options: { config: CONFIG as never, noPhysicFilePath: true },
      });
      const host = await findSecrets(RULES, json, file);
      expect(host.map(key4).sort()).toEqual(engine.messages.map((m) => key4({ ruleId: m.ruleId, messageId: m.messageId, range: m.range })).sort());
      expect(host.length).toBeGreaterThan(0);
    }
    const ids = async (file: typeof FILE) => (await findSecrets(RULES, json, file)).map((f) => f.ruleId);
    expect(await ids({ filePath: "key.json", ext: ".json" })).toContain("@secretlint/secretlint-rule-gcp");
    expect(await ids(FILE)).not.toContain("@secretlint/secretlint-rule-gcp");
  });

  test("text as the preset gets it in production (after our own rules), and other shapes of text", async () => {
    const texts = [
      ...CORPUS.map((c) => redactOwn(c.text).text),
      redactOwn(CORPUS.map((c) => c.text).join("\n")).text,
      ...CORPUS.map((c) => `emoji \u{1F600} and CRLF\r\n${c.text}\r\n`),
    ];
    for (const t of texts) expect({ t, found: await viaHost(t) }).toEqual({ t, found: await viaEngine(t) });
  });

  test("the preset is what the host runs: scanners with a file handler only, text content types", () => {
    // A preset upgrade that brings a rule of another kind fails here, not quietly in redaction.
    for (const rule of RULES) {
      expect({ id: rule.meta.id, type: rule.meta.type }).toEqual({ id: rule.meta.id, type: "scanner" });
      expect(rule.meta.supportedContentTypes.every((t) => ["text", "binary", "all"].includes(t))).toBe(true);
      const handlers = rule.create({ sharedOptions: {}, createTranslator: () => (() => ({ message: "" })) as never, report: () => {}, ignore: () => {} }, {});
      expect({ id: rule.meta.id, handlers: Object.keys(handlers) }).toEqual({ id: rule.meta.id, handlers: ["file"] });
    }
    expect(RULES.length).toBeGreaterThan(20);
  });

  test("a rule that throws fails the scan, and no other rule's rejection goes unhandled", async () => {
    const base = { messages: {}, meta: { id: "x", type: "scanner" as const, recommended: false, supportedContentTypes: ["text" as const] } };
    const late = {
      ...base,
      meta: { ...base.meta, id: "late" },
      create: () => ({
        file: async () => {
          await Bun.sleep(5);
          throw new Error("late");
        },
      }),
    };
    const now = {
      ...base,
      meta: { ...base.meta, id: "now" },
      create: () => ({
        file: () => {
          throw new Error("now");
        },
      }),
    };
    const unhandled: unknown[] = [];
    const on = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", on);
    try {
      await expect(findSecrets([late, now] as never, "text", FILE)).rejects.toThrow();
      await Bun.sleep(20);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", on);
    }
  });

  test("after a byte-order mark the ranges still index the text given (the engine's were one short)", async () => {
    const token = `shppa_${"Xy9".repeat(11)}`;
    const text = `\uFEFFkey ${token} here`;
    const found = await findSecrets(RULES, text, FILE);
    expect(found.map((f) => text.slice(f.range[0], f.range[1]))).toContain(token);
    // The engine found the same secrets, one character early.
    const engine = await lintSource({ source: { content: text, ...FILE, contentType: "text" }, options: { config: CONFIG as never, noPhysicFilePath: true } });
    expect(found.map((f) => `${f.ruleId} ${f.range[0]}`).sort()).toEqual(engine.messages.map((m) => `${m.ruleId} ${m.range[0] + 1}`).sort());
    const r = await redactSecrets(text);
    expect(r.text).not.toContain("Xy9");
    expect(r.text.startsWith("\uFEFFkey [REDACTED:")).toBe(true);
    expect(r.text.endsWith("] here")).toBe(true);
  });
});

describe("findings become markers", () => {
  test("overlapping ranges become one marker that covers both, the first one's kind", () => {
    const text = "a SECRETPART1PART2 b";
    const at = text.indexOf("SECRET");
    expect(
      replaceRanges(text, [
        { start: at, end: at + 11, kind: "one" },
        { start: at + 6, end: at + 16, kind: "two" },
      ]),
    ).toEqual({ text: "a [REDACTED:one] b", count: 1 });
    // Nested and separate ones.
    expect(
      replaceRanges("x AAAA y BB z", [
        { start: 2, end: 6, kind: "k" },
        { start: 3, end: 5, kind: "inner" },
        { start: 9, end: 11, kind: "b" },
      ]),
    ).toEqual({ text: "x [REDACTED:k] y [REDACTED:b] z", count: 2 });
    expect(replaceRanges("nothing", [])).toEqual({ text: "nothing", count: 0 });
  });
});
