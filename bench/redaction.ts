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
 *    each must stay in the same range as ordinary text (no quadratic blow-up);
 *  - password_classes: passwords on command lines and in plain words
 *    (test/fixtures/secrets/password-forms.ts): each form must come out exactly
 *    as expected (only the password replaced), and no near miss may change;
 *  - against (with --against <git ref>): that commit's redaction extracted and
 *    run in the same process, alternately with the working tree's, on the same
 *    inputs: its password-class figures and the speed figures side by side.
 * Usage: bun bench/redaction.ts [--mb 2] [--against main]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { Glob } from "bun";
import { redactOwn, redactSecrets } from "../src/core/secrets";
import { CORPUS, NEAR_MISSES } from "../test/fixtures/secrets/corpus";
import { KNOWN_FIXTURE_SECRETS, ordinaryLines } from "../test/fixtures/secrets/ordinary";
import { PASSWORD_FORMS, PASSWORD_NEAR_MISSES } from "../test/fixtures/secrets/password-forms";
import { adversarialInputs } from "./lib/adversarial";
import { redactionAt, type RedactFn, type RedactOwnFn } from "./lib/redaction-against";
import { NoteGenerator } from "./lib/corpus";
import { loadLocomo, locomoDir } from "./lib/locomo-data";
import { summarize } from "./lib/stats";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({ options: { mb: { type: "string", default: "2" }, against: { type: "string" } } });
const before = values.against ? await redactionAt(ROOT, values.against) : null;
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

// 1b. Passwords on command lines and in words: exact output, and near misses unchanged.
async function passwordClasses(redact: RedactFn) {
  const out: Record<string, { forms: number; redacted: number; missed: string[] }> = {};
  for (const f of PASSWORD_FORMS) {
    const c = (out[f.class] ??= { forms: 0, redacted: 0, missed: [] });
    c.forms++;
    const r = (await redact(f.text)).text;
    if (f.expected.test(r) && !r.includes(f.secret)) c.redacted++;
    else c.missed.push(f.family);
  }
  const changed: string[] = [];
  for (const line of PASSWORD_NEAR_MISSES) if ((await redact(line)).text !== line) changed.push(line.slice(0, 60));
  return { ...out, near_misses: PASSWORD_NEAR_MISSES.length, near_misses_changed: changed.length, changed: changed.slice(0, 10) };
}
const passwords = await passwordClasses(redactSecrets);

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
  return {
    lines: lines.length,
    secrets_in_fixtures: trueSecrets,
    falsely_changed: changed.length,
    rate_percent: round((100 * changed.length) / lines.length, 3),
    examples: changed.slice(0, 10),
  };
}
const sessions = await changedLines(ordinaryLines());
const sourceLines: { file: string; line: string }[] = [];
// The rule files are full of token prefixes, and the backtracking bait holds a PEM header on purpose.
const SKIPPED = [
  "src/core/secrets/rules.ts",
  "src/core/secrets/command-line.ts",
  "src/core/secrets/prose.ts",
  "src/core/secrets/redact.ts",
  "bench/lib/adversarial.ts",
  "bench/redaction.ts",
];
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
const dialogue =
  "missing" in locomo
    ? { skipped: `no LoCoMo data at ${locomo.missing}` }
    : await changedLines(locomo.memories.map((m) => ({ file: m.project, line: m.content })));

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
// Each implementation's samples; with --against the two run alternately, round by round, so load hits both alike.
const impls: { name: "after" | "before"; redactSecrets: RedactFn; redactOwn: RedactOwnFn }[] = [{ name: "after", redactSecrets, redactOwn }];
if (before) impls.push({ name: "before", redactSecrets: before.redactSecrets, redactOwn: before.redactOwn });
const samples = Object.fromEntries(
  impls.map((i) => [
    i.name,
    { own: [] as number[], both: [] as number[], found: 0, perMemory: [] as number[], cpuUs: 0, adversarial: {} as Record<string, number> },
  ]),
);
for (let r = 0; r < 5; r++) {
  for (const impl of r % 2 ? [...impls].reverse() : impls) {
    const m = samples[impl.name];
    let t = performance.now();
    impl.redactOwn(big);
    m.own.push(performance.now() - t);
    t = performance.now();
    m.found = (await impl.redactSecrets(big)).count;
    m.both.push(performance.now() - t);
  }
}

// 3b. Speed on memory-sized texts (what every ingest redacts): the bench corpus's notes, 100-1,500 characters.
const notes = new NoteGenerator(11);
const memories = Array.from({ length: 2000 }, () => notes.note().content);
for (const impl of impls) for (const m of memories.slice(0, 200)) await impl.redactSecrets(m);
// With --against, the two alternate text by text (which goes first alternating too), so a load that comes and goes hits both alike.
for (let r = 0; r < (before ? 4 : 1); r++) {
  for (const [i, text] of memories.entries()) {
    for (const impl of (i + r) % 2 ? [...impls].reverse() : impls) {
      const m = samples[impl.name];
      const cpuBefore = process.cpuUsage();
      const t = performance.now();
      await impl.redactSecrets(text);
      m.perMemory.push(performance.now() - t);
      const cpu = process.cpuUsage(cpuBefore);
      m.cpuUs += cpu.user + cpu.system;
    }
  }
}

// 4. Backtracking bait.
for (const [name, text] of Object.entries(adversarialInputs(1_000_000))) {
  for (const impl of impls) {
    const t = performance.now();
    await impl.redactSecrets(text);
    samples[impl.name].adversarial[name] = round(performance.now() - t, 1);
  }
}

function speedOf(name: "after" | "before") {
  const m = samples[name];
  const both = summarize(m.both);
  return {
    transcript_chars: big.length,
    secrets_found: m.found,
    own_rules_ms: summarize(m.own),
    own_and_secretlint_ms: both,
    mb_per_s: round(big.length / 1e6 / (both.p50 / 1000)),
    memory_sized: {
      texts: memories.length,
      passes: m.perMemory.length / memories.length,
      mean_chars: Math.round(memories.reduce((n, x) => n + x.length, 0) / memories.length),
      ms: summarize(m.perMemory, 3),
      cpu_ms_per_text: round(m.cpuUs / 1000 / m.perMemory.length, 4),
    },
  };
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
      password_classes: passwords,
      ordinary_sessions: sessions,
      repository_source: source,
      locomo_dialogue: dialogue,
      speed: speedOf("after"),
      adversarial_1mb_ms: samples.after.adversarial,
      against: before
        ? {
            ref: values.against,
            commit: before.sha,
            password_classes: await passwordClasses(before.redactSecrets),
            speed: speedOf("before"),
            adversarial_1mb_ms: samples.before.adversarial,
          }
        : undefined,
      machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load_average_at_start, load_average_at_end: loadavg().map((x) => round(x)) },
    },
    null,
    2,
  ),
);
