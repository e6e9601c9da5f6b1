/**
 * Secret redaction benchmark. Prints JSON:
 *  - corpus: recall on the secret corpus (test/fixtures/secrets/corpus.ts) and
 *    how many of its near misses came through unchanged;
 *  - ordinary: lines changed among ordinary coding-session lines (the capture
 *    fixtures and test/fixtures/secrets/ordinary-session.txt), and among the
 *    lines of this repository's own source read as a session would show it,
 *    and among the dialogue turns of the LoCoMo split (../shared, when present);
 *  - speed: redactSecrets on a large transcript (the fixtures repeated with the
 *    corpus sprinkled in), our own rules alone and both sets; and per call on
 *    memory-sized texts (the HTTP bench's notes), what every ingest pays;
 *  - adversarial: 1 MB inputs built to make a rule backtrack (bench/lib/adversarial.ts);
 *    each must stay in the same range as ordinary text (no quadratic blow-up).
 * Usage: bun bench/redaction.ts [--mb 2]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { Glob } from "bun";
import { redactOwn, redactSecrets } from "../src/core/secrets";
import { CORPUS, NEAR_MISSES } from "../test/fixtures/secrets/corpus";
import { KNOWN_FIXTURE_SECRETS, ordinaryLines } from "../test/fixtures/secrets/ordinary";
import { adversarialInputs } from "./lib/adversarial";
import { NoteGenerator } from "./lib/corpus";
import { loadLocomo, locomoDir } from "./lib/locomo-data";
import { summarize } from "./lib/stats";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({ options: { mb: { type: "string", default: "2" } } });
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const load_average_at_start = loadavg().map((x) => round(x));

// 1. Corpus.
const missed: string[] = [];
const falsePositives: string[] = [];
for (const c of CORPUS) {
  const r = await redactSecrets(c.text);
  if (r.text.includes(c.secret) || !r.text.includes("[REDACTED:")) missed.push(c.kind);
  if ((await redactSecrets(c.negative)).text !== c.negative) falsePositives.push(c.kind);
}
for (const line of NEAR_MISSES) if ((await redactSecrets(line)).text !== line) falsePositives.push(line.slice(0, 40));

// 2. Ordinary lines.
async function changedLines(lines: { file: string; line: string }[]) {
  const changed: { file: string; redacted: string }[] = [];
  let trueSecrets = 0;
  for (const { file, line } of lines) {
    const r = await redactSecrets(line);
    if (r.text === line) continue;
    if (KNOWN_FIXTURE_SECRETS.some((s) => line.includes(s))) trueSecrets++;
    else changed.push({ file, redacted: r.text.slice(0, 160) });
  }
  return { lines: lines.length, secrets_in_fixtures: trueSecrets, falsely_changed: changed.length, rate_percent: round((100 * changed.length) / lines.length, 3), examples: changed.slice(0, 10) };
}
const sessions = await changedLines(ordinaryLines());
const sourceLines: { file: string; line: string }[] = [];
// The rule files are full of token prefixes, and the backtracking bait holds a PEM header on purpose.
const SKIPPED = ["src/core/secrets/rules.ts", "src/core/secrets/redact.ts", "bench/lib/adversarial.ts", "bench/redaction.ts"];
const skippedSeen = new Set<string>();
for (const f of new Glob("{src,bench,types}/**/*.ts").scanSync(ROOT)) {
  const path = f.split(sep).join("/");
  if (SKIPPED.includes(path)) {
    skippedSeen.add(path);
    continue;
  }
  for (const line of readFileSync(resolve(ROOT, f), "utf8").split("\n")) if (line.trim()) sourceLines.push({ file: path, line });
}
// A renamed rule file would be read as ordinary source and count its own patterns as false redactions.
const unseen = SKIPPED.filter((p) => !skippedSeen.has(p));
if (unseen.length) throw new Error(`bench/redaction.ts skips files that are not there: ${unseen.join(", ")}`);
const source = await changedLines(sourceLines);
const locomo = loadLocomo(locomoDir());
const dialogue = "missing" in locomo ? { skipped: `no LoCoMo data at ${locomo.missing}` } : await changedLines(locomo.memories.map((m) => ({ file: m.project, line: m.content })));

// 3. Speed on a large transcript.
const targetChars = Number(values.mb) * 1_000_000;
const base = ordinaryLines().map((l) => l.line);
const parts: string[] = [];
let size = 0;
for (let i = 0; size < targetChars; i++) {
  const line = i % 40 === 0 ? CORPUS[(i / 40) % CORPUS.length].text : base[i % base.length];
  parts.push(line);
  size += line.length + 1;
}
const big = parts.join("\n");
const own: number[] = [];
const both: number[] = [];
let found = 0;
for (let i = 0; i < 5; i++) {
  let t = performance.now();
  redactOwn(big);
  own.push(performance.now() - t);
  t = performance.now();
  found = (await redactSecrets(big)).count;
  both.push(performance.now() - t);
}
const bothSummary = summarize(both);

// 3b. Speed on memory-sized texts (what every ingest redacts): the bench corpus's notes, 100-1,500 characters.
const notes = new NoteGenerator(11);
const memories = Array.from({ length: 2000 }, () => notes.note().content);
for (const m of memories.slice(0, 200)) await redactSecrets(m);
const perMemory: number[] = [];
const cpuBefore = process.cpuUsage();
for (const m of memories) {
  const t = performance.now();
  await redactSecrets(m);
  perMemory.push(performance.now() - t);
}
const cpuPerMemory = process.cpuUsage(cpuBefore);

// 4. Backtracking bait.
const adversarial: Record<string, number> = {};
for (const [name, text] of Object.entries(adversarialInputs(1_000_000))) {
  const t = performance.now();
  await redactSecrets(text);
  adversarial[name] = round(performance.now() - t, 1);
}

console.log(
  JSON.stringify(
    {
      corpus: {
        kinds: CORPUS.length,
        redacted: CORPUS.length - missed.length,
        recall_percent: round((100 * (CORPUS.length - missed.length)) / CORPUS.length),
        missed,
        near_misses: CORPUS.length + NEAR_MISSES.length,
        near_misses_changed: falsePositives.length,
        false_positives: falsePositives,
      },
      ordinary_sessions: sessions,
      repository_source: source,
      locomo_dialogue: dialogue,
      speed: {
        transcript_chars: big.length,
        secrets_found: found,
        own_rules_ms: summarize(own),
        own_and_secretlint_ms: bothSummary,
        mb_per_s: round(big.length / 1e6 / (bothSummary.p50 / 1000)),
        memory_sized: {
          texts: memories.length,
          mean_chars: Math.round(memories.reduce((n, m) => n + m.length, 0) / memories.length),
          ms: summarize(perMemory, 3),
          cpu_ms_per_text: round((cpuPerMemory.user + cpuPerMemory.system) / 1000 / memories.length, 4),
        },
      },
      adversarial_1mb_ms: adversarial,
      machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load_average_at_start, load_average_at_end: loadavg().map((x) => round(x)) },
    },
    null,
    2,
  ),
);
