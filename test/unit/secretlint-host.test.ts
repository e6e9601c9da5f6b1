import { describe, expect, test } from "bun:test";
import { lintSource } from "@secretlint/core";
import { secretLintProfiler } from "@secretlint/profiler";
import { rules as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { findSecrets } from "../../src/core/secrets/secretlint-host";
import { redactSecrets } from "../../src/core/secrets";
import { CORPUS, NEAR_MISSES } from "../fixtures/secrets/corpus";
import { ordinaryLines } from "../fixtures/secrets/ordinary";

// redact.ts runs secretlint's rules in our own host instead of secretlint's
// engine (lintSource). The host must find exactly what the engine finds:
// compared here, rule by rule and range by range, on every text we have.
secretLintProfiler.setEnabled(false);
const RULES = recommended.filter((r) => !r.meta.id.endsWith("filter-comments"));
const CONFIG = { rules: RULES.map((rule) => ({ id: rule.meta.id, rule, options: {} })) };
const FILE = { filePath: "transcript.txt", ext: ".txt" };

const key = (f: { ruleId: string; messageId?: string; range: readonly [number, number] }) => `${f.ruleId} ${f.messageId} ${f.range[0]}-${f.range[1]}`;
async function viaEngine(content: string): Promise<string[]> {
  const r = await lintSource({ source: { content, ...FILE, contentType: "text" }, options: { config: CONFIG as never, noPhysicFilePath: true } });
  return [...new Set(r.messages.map((m) => key({ ruleId: m.ruleId, messageId: m.messageId, range: m.range })))].sort();
}
async function viaHost(content: string): Promise<string[]> {
  return [...new Set((await findSecrets(RULES, content, FILE)).map(key))].sort();
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

  test("rules that look at the file name see a transcript, as before", async () => {
    // A service-account JSON is only reported for .json files; as a transcript line it is the private key rule's.
    const json = '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"}';
    expect(await viaHost(json)).toEqual(await viaEngine(json));
  });

  test("after a byte-order mark the ranges still index the text given (the engine's were one short)", async () => {
    const token = `shppa_${"Xy9".repeat(11)}`;
    const text = `\uFEFFkey ${token} here`;
    const found = await findSecrets(RULES, text, FILE);
    expect(found.map((f) => text.slice(f.range[0], f.range[1]))).toContain(token);
    const r = await redactSecrets(text);
    expect(r.text).not.toContain("Xy9");
    expect(r.text.startsWith("\uFEFFkey [REDACTED:")).toBe(true);
    expect(r.text.endsWith("] here")).toBe(true);
  });
});
