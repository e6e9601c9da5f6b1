/**
 * `bun run mutate`: plants each one-line bug of bench/mutate/rules.ts in a
 * temporary copy of the repo, runs only the test files listed for it and
 * reports which mutants the tests kill. The working tree is never written.
 *
 * Our own harness rather than StrykerJS: Stryker has no `bun test` runner
 * and generates thousands of mutants where we want a few dozen that each
 * stand for a rule of the spec or docs/.
 *
 *   bun run mutate [--concurrency 1|2] [--only <id-substring>] [--timeout <s>] [--no-baseline]
 *
 * Prints one JSON document (per-mutant status, kill rate, survivors) on
 * stdout and a short summary on stderr. Exit code 1 when a mutant survived
 * or errored, or the baseline failed.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { RULES, type Mutant } from "./mutate/rules";

const REPO = resolve(import.meta.dir, "..");
const BUN = process.execPath;
// What a test run reads; node_modules is symlinked, not copied.
const COPIED = ["src", "test", "assets", "types", "package.json", "bunfig.toml", "tsconfig.json", "build.ts"];

interface Options {
  concurrency: number;
  only: string | null;
  timeoutS: number;
  baseline: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { concurrency: 2, only: null, timeoutS: 240, baseline: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--concurrency") o.concurrency = Math.max(1, Math.min(2, Number(argv[++i]) || 1));
    else if (a === "--only") o.only = argv[++i] ?? null;
    else if (a === "--timeout") o.timeoutS = Number(argv[++i]) || o.timeoutS;
    else if (a === "--no-baseline") o.baseline = false;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

type Status = "killed" | "survived" | "timeout" | "error";
interface Outcome {
  id: string;
  rule: string;
  file: string;
  status: Status;
  ms: number;
  tests: string[];
  detail?: string;
}

/** A private copy of the repo: the mutants are planted there, one at a time. */
function makeCopy(base: string, n: number): string {
  const root = join(base, `w${n}`);
  const repo = join(root, "repo");
  mkdirSync(repo, { recursive: true });
  for (const p of COPIED) {
    try {
      cpSync(join(REPO, p), join(repo, p), { recursive: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
  symlinkSync(join(REPO, "node_modules"), join(repo, "node_modules"));
  // Tests reach the shared LoCoMo data as ../shared from the repo root.
  try {
    symlinkSync(resolve(REPO, "..", "shared"), join(root, "shared"));
  } catch {
    /* absent: the tests needing it skip */
  }
  return repo;
}

type RunResult = { code: number | null; timedOut: boolean; tail: string };

/**
 * One `bun test` process per file, stopping at the first failure: test files
 * sharing a process share module state (`npm test` runs them that way too, but
 * in its own order), and a kill must not depend on which files ran together.
 */
async function runTests(repo: string, tests: string[], timeoutS: number): Promise<RunResult> {
  const deadline = Date.now() + timeoutS * 1000;
  let last: RunResult = { code: 0, timedOut: false, tail: "" };
  for (const t of tests) {
    last = await runFile(repo, t, Math.max(1, (deadline - Date.now()) / 1000));
    if (last.code !== 0 || last.timedOut) return { ...last, tail: `${t}: ${last.tail}` };
  }
  return last;
}

async function runFile(repo: string, test: string, timeoutS: number): Promise<RunResult> {
  const proc = Bun.spawn([BUN, "test", "--timeout", "60000", "--bail", test], {
    cwd: repo,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, timeoutS * 1000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  clearTimeout(timer);
  const text = `${out}\n${err}`;
  const fails = text.split("\n").filter((l) => /^\(fail\)|error:/.test(l.trim()));
  return { code, timedOut, tail: (fails.length ? fails.slice(0, 3) : text.trim().split("\n").slice(-3)).join(" | ").slice(0, 400) };
}

async function runMutant(repo: string, m: Mutant & { rule: string }, timeoutS: number): Promise<Outcome> {
  const started = Date.now();
  const path = join(repo, m.file);
  const base = { id: m.id, rule: m.rule, file: m.file, tests: m.tests };
  let original: string;
  try {
    original = readFileSync(path, "utf8");
  } catch {
    return { ...base, status: "error", ms: 0, detail: `${m.file} does not exist` };
  }
  const at = original.indexOf(m.find);
  // A snippet that moved or changed is the rule list's fault, never a kill.
  if (at < 0) return { ...base, status: "error", ms: 0, detail: "original snippet not found (source changed: update bench/mutate/rules.ts)" };
  if (original.indexOf(m.find, at + 1) >= 0) return { ...base, status: "error", ms: 0, detail: "original snippet occurs more than once" };
  writeFileSync(path, original.slice(0, at) + m.replace + original.slice(at + m.find.length));
  try {
    const r = await runTests(repo, m.tests, timeoutS);
    const status: Status = r.timedOut ? "timeout" : r.code === 0 ? "survived" : "killed";
    return { ...base, status, ms: Date.now() - started, detail: status === "survived" ? undefined : r.tail };
  } finally {
    writeFileSync(path, original);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const mutants = RULES.flatMap((r) => r.mutants.map((m) => ({ ...m, rule: r.rule }))).filter(
    (m) => !opts.only || m.id.includes(opts.only) || m.rule.includes(opts.only),
  );
  const ids = new Set<string>();
  for (const m of mutants) {
    if (ids.has(m.id)) throw new Error(`duplicate mutant id ${m.id}`);
    ids.add(m.id);
  }
  const base = mkdtempSync(join(tmpdir(), "memsvc-mutate-"));
  const started = Date.now();
  try {
    const copies = Array.from({ length: opts.concurrency }, (_, i) => makeCopy(base, i));
    // Unmutated, every listed test file must pass, or a "kill" would mean nothing.
    let baseline: { ok: boolean; detail?: string; ms: number } | null = null;
    if (opts.baseline) {
      const files = [...new Set(mutants.flatMap((m) => m.tests))].sort();
      const t0 = Date.now();
      const r = await runTests(copies[0], files, opts.timeoutS * 3);
      baseline = { ok: r.code === 0 && !r.timedOut, detail: r.code === 0 ? undefined : r.tail, ms: Date.now() - t0 };
      process.stderr.write(
        `baseline (${files.length} test files): ${baseline.ok ? "pass" : `FAIL ${baseline.detail}`} in ${(baseline.ms / 1000).toFixed(0)} s\n`,
      );
      if (!baseline.ok) {
        console.log(JSON.stringify({ baseline }, null, 2));
        process.exitCode = 1;
        return;
      }
    }
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.all(
      copies.map(async (repo) => {
        while (next < mutants.length) {
          const m = mutants[next++];
          const o = await runMutant(repo, m, opts.timeoutS);
          outcomes.push(o);
          process.stderr.write(`[${outcomes.length}/${mutants.length}] ${o.status.padEnd(8)} ${o.id} (${(o.ms / 1000).toFixed(1)} s)\n`);
        }
      }),
    );
    outcomes.sort((a, b) => mutants.findIndex((m) => m.id === a.id) - mutants.findIndex((m) => m.id === b.id));
    const count = (s: Status) => outcomes.filter((o) => o.status === s).length;
    const killed = count("killed") + count("timeout");
    const valid = outcomes.length - count("error");
    const survivors = outcomes.filter((o) => o.status === "survived");
    const errors = outcomes.filter((o) => o.status === "error");
    const report = {
      rules: new Set(mutants.map((m) => m.rule)).size,
      mutants: outcomes.length,
      killed: count("killed"),
      timeout: count("timeout"),
      survived: survivors.length,
      errors: errors.length,
      kill_rate: valid ? Math.round((killed / valid) * 1000) / 10 : null,
      seconds: Math.round((Date.now() - started) / 1000),
      concurrency: opts.concurrency,
      baseline,
      survivors: survivors.map((o) => ({ id: o.id, rule: o.rule, file: o.file, tests: o.tests })),
      error_details: errors.map((o) => ({ id: o.id, detail: o.detail })),
      outcomes,
    };
    console.log(JSON.stringify(report, null, 2));
    process.stderr.write(
      `\nmutation score: ${report.kill_rate}% (${killed} killed of ${valid}; ${survivors.length} survived, ${errors.length} errors) over ${report.rules} rules in ${report.seconds} s\n`,
    );
    for (const s of survivors) process.stderr.write(`  SURVIVED ${s.id}: ${s.rule} (${s.file}; tests ${s.tests.join(", ")})\n`);
    for (const e of errors) process.stderr.write(`  ERROR    ${e.id}: ${e.detail}\n`);
    process.exitCode = survivors.length || errors.length ? 1 : 0;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
