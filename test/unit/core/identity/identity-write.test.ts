import { describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recoverFolder, recoverIdentity, writeSections } from "../../../../src/core/identity";
import { BUN, run } from "../../../helpers/process";

/**
 * Crash recovery of multi-section identity writes, one test per point a
 * kill -9 can interrupt writeSections at. Each test builds exactly the files
 * the writer leaves at that point (same names, same journal), runs the
 * start-up recovery, and checks the folder holds all old or all new bodies
 * and none of our temp files.
 */

const OLD = { alpha: "old alpha", beta: "old beta", gamma: "old gamma" };
const NEW = { alpha: "new alpha", beta: "new beta", gamma: "new gamma" };
const DEAD_PID = 2 ** 22 + 12345; // above pid_max's default: never a live process

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-idw-"));
  for (const [n, b] of Object.entries(OLD)) writeFileSync(join(dir, `${n}.md`), b);
  return dir;
}

function bodies(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort())
    if (/^[a-z].*\.md$/.test(f) && statSync(join(dir, f)).isFile()) out[f.slice(0, -3)] = readFileSync(join(dir, f), "utf8");
  return out;
}

const hidden = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("."));

interface Staged {
  entries: { temp: string; target: string; backup: string | null }[];
  journal: string;
}

/** Step 1 as the writer does it: temps with the new bodies, hard-link backups of existing targets. */
function stage(dir: string, sections: Record<string, string>, pid = DEAD_PID): Staged {
  const entries: Staged["entries"] = [];
  let k = 0;
  for (const [n, body] of Object.entries(sections)) {
    const hex = (0x10000000 + k++).toString(16);
    const temp = `.${n}.md.${pid}.${hex}.tmp`;
    writeFileSync(join(dir, temp), body);
    let backup: string | null = null;
    if (existsSync(join(dir, `${n}.md`))) {
      backup = `.${n}.md.${pid}.${hex}.bak`;
      linkSync(join(dir, `${n}.md`), join(dir, backup));
    }
    entries.push({ temp, target: `${n}.md`, backup });
  }
  return { entries, journal: `.put.${pid}.abcdef01.journal` };
}

function commit(dir: string, s: Staged, state: "forward" | "back" = "forward"): void {
  writeFileSync(join(dir, s.journal), JSON.stringify({ state, entries: s.entries }));
}

function renameFirst(dir: string, s: Staged, n: number): void {
  for (const e of s.entries.slice(0, n)) renameSync(join(dir, e.temp), join(dir, e.target));
}

const warnings: string[] = [];
const warn = (m: string) => void warnings.push(m);

describe("recovery of an interrupted multi-section write", () => {
  test("killed while writing temps (no journal yet): old bodies kept, temps and backups removed", () => {
    const dir = folder();
    const s = stage(dir, NEW);
    writeFileSync(join(dir, `.delta.md.${DEAD_PID}.0badf00d.tmp`), "half a bo"); // the one being written
    const r = recoverFolder(dir, warn);
    expect(bodies(dir)).toEqual(OLD);
    expect(hidden(dir)).toEqual([]);
    expect(r).toEqual({ rolledForward: 0, rolledBack: 0, removed: s.entries.length * 2 + 1 });
  });

  test("killed while writing the journal (only its .tmp exists): not committed, old bodies kept", () => {
    const dir = folder();
    const s = stage(dir, NEW);
    writeFileSync(join(dir, `${s.journal}.tmp`), JSON.stringify({ state: "forward", entries: s.entries }).slice(0, 30));
    recoverFolder(dir, warn);
    expect(bodies(dir)).toEqual(OLD);
    expect(hidden(dir)).toEqual([]);
  });

  for (const renamed of [0, 1, 2, 3]) {
    test(`killed after the journal committed and ${renamed} of 3 renames: rolled forward to all new`, () => {
      const dir = folder();
      const s = stage(dir, NEW);
      commit(dir, s);
      renameFirst(dir, s, renamed);
      const r = recoverFolder(dir, warn);
      expect(bodies(dir)).toEqual(NEW);
      expect(hidden(dir)).toEqual([]);
      expect(r.rolledForward).toBe(1);
    });
  }

  test("killed while removing backups after all renames: all new, leftovers removed", () => {
    const dir = folder();
    const s = stage(dir, NEW);
    commit(dir, s);
    renameFirst(dir, s, 3);
    unlinkSync(join(dir, s.entries[0].backup!));
    recoverFolder(dir, warn);
    expect(bodies(dir)).toEqual(NEW);
    expect(hidden(dir)).toEqual([]);
  });

  test("a new section in the PUT: forward creates it, no journal leaves it absent", () => {
    const withNew = { ...NEW, delta: "new delta" };
    const a = folder();
    const sa = stage(a, withNew);
    commit(a, sa);
    renameFirst(a, sa, 1);
    recoverFolder(a, warn);
    expect(bodies(a)).toEqual(withNew);

    const b = folder();
    stage(b, withNew);
    recoverFolder(b, warn);
    expect(bodies(b)).toEqual(OLD);
    expect(hidden(b)).toEqual([]);
  });

  for (const restored of [0, 1, 2, 3]) {
    test(`killed during an in-process rollback (journal "back", ${restored} of 3 restored): all old`, () => {
      const dir = folder();
      const withNew = { ...NEW, delta: "new delta" };
      const s = stage(dir, withNew);
      commit(dir, s, "back");
      renameFirst(dir, s, 4);
      for (const e of s.entries.slice(0, restored)) if (e.backup) renameSync(join(dir, e.backup), join(dir, e.target));
      const r = recoverFolder(dir, warn);
      expect(bodies(dir)).toEqual(OLD);
      expect(hidden(dir)).toEqual([]);
      expect(r.rolledBack).toBe(1);
    });
  }

  test("files of a live process writing the same folder are left alone", () => {
    const dir = folder();
    const s = stage(dir, NEW, process.ppid); // the test runner's parent: alive, not us
    commit(dir, s);
    recoverFolder(dir, warn);
    expect(bodies(dir)).toEqual(OLD);
    expect(hidden(dir).length).toBe(7);
  });

  test("a damaged journal is removed with a warning, never replayed; hand-made dotfiles survive", () => {
    const dir = folder();
    const s = stage(dir, NEW);
    writeFileSync(join(dir, s.journal), "{not json");
    writeFileSync(join(dir, ".notes.swp"), "editor file");
    warnings.length = 0;
    recoverFolder(dir, warn);
    expect(bodies(dir)).toEqual(OLD);
    expect(hidden(dir)).toEqual([".notes.swp"]);
    expect(warnings.join("\n")).toContain("unreadable write journal");
  });

  test("a journal naming a path outside its folder is not replayed", () => {
    const root = mkdtempSync(join(tmpdir(), "memsvc-idw-"));
    const dir = join(root, "inner");
    mkdirSync(dir);
    writeFileSync(join(root, "victim.md"), "keep me");
    writeFileSync(
      join(dir, `.put.${DEAD_PID}.abcdef01.journal`),
      JSON.stringify({ state: "back", entries: [{ temp: "x", target: "../victim.md", backup: null }] }),
    );
    recoverFolder(dir, warn);
    expect(readFileSync(join(root, "victim.md"), "utf8")).toBe("keep me");
  });

  test("recoverIdentity covers agent folders too", () => {
    const root = folder();
    const agent = join(root, "agents", "bot");
    mkdirSync(agent, { recursive: true });
    writeFileSync(join(agent, "soul.md"), "old soul");
    const s = stage(agent, { soul: "new soul" });
    commit(agent, s);
    const r = recoverIdentity(root, warn);
    expect(readFileSync(join(agent, "soul.md"), "utf8")).toBe("new soul");
    expect(hidden(agent)).toEqual([]);
    expect(r.rolledForward).toBe(1);
  });
});

describe("writeSections", () => {
  test("writes every section 0600, leaves no temp or journal behind", () => {
    const dir = folder();
    writeSections(dir, dir, Object.entries({ ...NEW, delta: "d" }));
    expect(bodies(dir)).toEqual({ ...NEW, delta: "d" });
    expect(hidden(dir)).toEqual([]);
    expect(statSync(join(dir, "delta.md")).mode & 0o777).toBe(0o600);
  });

  test("a section whose file is a directory: refused before anything is renamed, nothing left behind", () => {
    const dir = folder();
    mkdirSync(join(dir, "zeta.md"));
    expect(() => writeSections(dir, dir, Object.entries({ ...NEW, zeta: "z" }))).toThrow(/is a directory/);
    expect(bodies(dir)).toEqual(OLD);
    expect(hidden(dir)).toEqual([]);
  });
});

/**
 * The in-process rollback, reached for real: a child process whose
 * renameSync fails (EIO) or kills the process at the Nth call. Renames in
 * order: 1 the journal's commit, 2-5 the four sections (alpha, beta, delta
 * new, gamma), then on failure the "back" journal and the backup restores.
 */
describe("a rename failing mid-write (child process with a failing renameSync)", () => {
  const child = (dir: string, failAt: number, killAt = 0) =>
    run([BUN, join(import.meta.dir, "../../../helpers/rename-fault.ts"), dir, String(failAt), String(killAt)], { ...process.env } as Record<string, string>);

  for (const failAt of [2, 3, 4, 5]) {
    test(`rename ${failAt} fails: the error is raised and every section keeps its old body`, async () => {
      const dir = folder();
      const r = await child(dir, failAt);
      expect(r.stdout.trim()).toBe("error: EIO: i/o error, rename (simulated)");
      expect(bodies(dir)).toEqual(OLD);
      expect(hidden(dir)).toEqual([]);
    });
  }

  test("no failure: all four written, nothing left behind", async () => {
    const dir = folder();
    expect((await child(dir, 0)).stdout.trim()).toBe("ok");
    expect(bodies(dir)).toEqual({ ...NEW, delta: "new delta" });
    expect(hidden(dir)).toEqual([]);
  });

  // Rename 4 (delta) fails; rename 5 commits the "back" journal; 6 and 7 restore backups.
  for (const [killAt, expected, label] of [
    [5, { ...NEW, delta: "new delta" }, "before the rollback was committed: the write is completed, all new"],
    [6, OLD, "after the rollback was committed: all old"],
    [7, OLD, "half way through the restores: all old"],
  ] as const) {
    test(`killed at rename ${killAt}, ${label}`, async () => {
      const dir = folder();
      const r = await child(dir, 4, killAt);
      expect(r.code).not.toBe(0);
      expect(hidden(dir).some((f) => f.endsWith(".journal"))).toBe(true);
      recoverFolder(dir, warn);
      expect(bodies(dir)).toEqual(expected);
      expect(hidden(dir)).toEqual([]);
    });
  }
});
