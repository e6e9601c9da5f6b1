import { afterEach, expect, test } from "bun:test";
import { spawn } from "bun";
import { Database } from "bun:sqlite";
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/store/sqlite/open";
import { homeRows, onPostgres } from "../helpers/engine";
import { buildClaudeCodeHome, buildClaudeMemDb } from "../helpers/claude-mem-db";
import { BUN, childEnv, freePort, ROOT, run, startProcess, tempHome, type Running } from "../helpers/process";

const FIX = join(import.meta.dir, "..", "fixtures", "import");
let server: Running | null = null;
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

test("tried as a new user: a claude-mem database and a Claude Code home import into a fresh home; /search finds them with provenance in the memory browser", async () => {
  const home = tempHome();
  const db = buildClaudeMemDb(join(tempHome(), "claude-mem.db"));
  const claude = buildClaudeCodeHome();

  // A dry run writes nothing, not even a database.
  const dry = await run([BUN, "src/main.ts", "import", "--from", "claude-mem", db, "--dry-run"], childEnv(home));
  expect(dry.code).toBe(0);
  expect(dry.stdout).toContain("dry run: 4 items from 1 source; 4 new, 0 already there");
  expect(dry.stdout).toContain("[decisions] shop · claude-mem · ");
  expect(dry.stdout).toContain("Stripe webhooks are verified");
  expect(existsSync(join(home, "memsvc.db"))).toBe(false);

  const mem = await run([BUN, "src/main.ts", "import", "--from", "claude-mem", db], childEnv(home));
  expect(mem.code).toBe(0);
  expect(mem.stderr).toContain("1 row with no text was left out");
  expect(mem.stdout).toContain(
    `imported 4 items from 1 source into ${home}: 4 added, 0 merged, 0 skipped (already there), 2 links, 1 named link to nothing imported or stored (left out)`,
  );
  const cc = await run([BUN, "src/main.ts", "import", "--from", "claude-code", claude], childEnv(home));
  expect(cc.code).toBe(0);
  expect(cc.stdout).toMatch(/imported 1\d items from 7 sources into .*: 1\d added, 0 merged, 0 skipped/);
  // Again: nothing new.
  const again = await run([BUN, "src/main.ts", "import", "--from", "claude-code", claude], childEnv(home));
  expect(again.stdout).toMatch(/: 0 added, 0 merged, 1\d skipped \(already there\), 0 links/);

  const port = await freePort();
  server = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], childEnv(home), port);
  const search = async (q: string) =>
    (await (await fetch(`${server!.url}/search?query=${encodeURIComponent(q)}`)).json()) as { results: { id: string; content: string }[] };
  const stripe = (await search("stripe webhook signing secret")).results[0];
  expect(stripe.content).toContain("Stripe webhooks are verified with the signing secret");
  const detail = (await (await fetch(`${server!.url}/memories/detail?id=${stripe.id}`)).json()) as {
    memory: Record<string, unknown>;
    links: { relationship: string; preview: string }[];
  };
  expect(detail.memory.source_agent).toBe("claude-mem");
  expect(detail.memory.source_session).toBe(`${db}#observations/1`);
  expect(detail.memory.project).toBe("shop");
  expect(detail.memory.created_at).toBe("2025-05-02T09:15:00.000Z");
  expect(detail.links.find((l) => l.relationship === "part_of")?.preview).toContain("Session summary");

  const pnpm = (await search("pnpm lockfile shop repository")).results.find((r) => r.content.includes("Always run pnpm"))!;
  const pd = (await (await fetch(`${server!.url}/memories/detail?id=${pnpm.id}`)).json()) as { memory: Record<string, unknown> };
  expect(pd.memory.source_agent).toBe("claude-code");
  expect(pd.memory.memory_type).toBe("learnings");
  expect(String(pd.memory.source_session)).toMatch(/\/memory\/feedback_pnpm\.md:\d+$/);
});

test("import --from: refused files are one line each and nothing of them lands; a source with nothing readable exits 1", async () => {
  const home = tempHome();
  const bad = await run([BUN, "src/main.ts", "import", "--from", "mem0", join(FIX, "mem0", "bad-entry.json")], childEnv(home));
  expect(bad.code).toBe(1);
  expect(bad.stderr.trim().split("\n")).toEqual([
    `memsvc import: ${join(FIX, "mem0", "bad-entry.json")}: entry 2 has no "memory" text`,
    `memsvc import: nothing imported from ${join(FIX, "mem0", "bad-entry.json")}`,
  ]);
  const mixed = await run([BUN, "src/main.ts", "import", "--from", "markdown", join(FIX, "markdown", "broken")], childEnv(home));
  expect(mixed.code).toBe(0);
  expect(mixed.stderr).toContain("bad-front-matter.md: front matter is not valid YAML");
  expect(mixed.stderr).toContain("binary.md: not a text file (binary content)");
  expect(mixed.stdout).toContain("1 added");
  expect((await homeRows(home, "SELECT content FROM memories")).map((r) => r.content)).toEqual([
    "good\n\nThe deploy script tags each release with the short commit hash and the date.",
  ]);
  const kind = await run([BUN, "src/main.ts", "import", "--from", "evernote", "x"], childEnv(home));
  expect(kind.code).not.toBe(0);
  expect(kind.stderr).toContain("--from must be one of claude-mem, claude-code, agents-md, mem0, markdown, memsvc");
});

test("export --format markdown then import --from markdown into an empty home; memsvc JSONL merges into a home with memories", async () => {
  const home = tempHome();
  const repos = join(tempHome(), "repos");
  cpSync(join(FIX, "agents-md", "repos"), repos, { recursive: true });
  mkdirSync(join(repos, "api", ".git"));
  expect((await run([BUN, "src/main.ts", "import", "--from", "agents-md", repos], childEnv(home))).code).toBe(0);
  expect((await run([BUN, "src/main.ts", "import", "--from", "mem0", join(FIX, "mem0", "export.json")], childEnv(home))).code).toBe(0);
  const vault = join(tempHome(), "vault");
  const ex = await run([BUN, "src/main.ts", "export", "--format", "markdown", vault], childEnv(home));
  expect(ex.code).toBe(0);
  expect(ex.stdout).toMatch(/exported 1\d memories \(4 project folders, \d+ links?\) as Markdown to /);
  expect(readdirSync(vault).sort()).toEqual(["_no-project", "api", "billing", "shop"]);
  const fresh = tempHome();
  const im = await run([BUN, "src/main.ts", "import", "--from", "markdown", vault], childEnv(fresh));
  expect(im.code).toBe(0);
  const cols = "SELECT content, memory_type, project, created_at, source_agent FROM memories ORDER BY content";
  expect(await homeRows(fresh, cols)).toEqual(await homeRows(home, cols));
  // The mem0 secret was redacted on the way in.
  expect((await homeRows(fresh, "SELECT content FROM memories WHERE content LIKE '%allergic%'"))[0].content).not.toContain("AKIAIOSFODNN7EXAMPLE");

  const jsonl = join(tempHome(), "export.jsonl");
  expect((await run([BUN, "src/main.ts", "export", "--out", jsonl], childEnv(home))).code).toBe(0);
  const merged = await run([BUN, "src/main.ts", "import", "--from", "memsvc", jsonl], childEnv(fresh));
  expect(merged.stdout).toMatch(/: 0 added, 0 merged, 1\d skipped/);
});

test.skipIf(onPostgres)(
  "import --from markdown killed (kill -9) between batches into an empty home: the re-run completes it, with every index and link count a clean store has [SQLite]",
  async () => {
    // Notes of random six-letter words (no two near-duplicates: every note is a memory whatever the
    // batches), a folder per project, every third linking to the note before it. 256 new items a
    // batch: 16 batches.
    const vault = join(tempHome(), "vault");
    let seed = 5;
    const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0), seed / 2 ** 32);
    const word = () => Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join("");
    const NOTES = 4000;
    for (let i = 0; i < NOTES; i++) {
      const dir = join(vault, `p${i % 3}`);
      if (i < 3) mkdirSync(dir, { recursive: true });
      const link = i % 3 === 0 && i > 0 ? ` See [[note ${i - 1}]].` : "";
      writeFileSync(join(dir, `note ${i}.md`), `${Array.from({ length: 10 }, word).join(" ")}.${link}\n`);
    }
    const linked = Math.floor((NOTES - 1) / 3);
    const home = tempHome();
    const db = join(home, "memsvc.db");
    const look = () => {
      if (!existsSync(db)) return null;
      const d = new Database(db, { readonly: true });
      try {
        const n = d.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
        const marked = d.query("SELECT 1 FROM meta WHERE key = 'import_deferred_indexes'").get() !== null;
        return { n, marked, secondary: secondaryIndexes(d) };
      } catch {
        return null; // the schema is still being made
      } finally {
        d.close();
      }
    };
    const proc = spawn([BUN, "src/main.ts", "import", "--from", "markdown", vault], { env: childEnv(home), cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    let seen: ReturnType<typeof look> = null;
    for (const started = Date.now(); Date.now() - started < 50_000 && proc.exitCode === null; await Bun.sleep(20)) {
      seen = look();
      if (seen && seen.n >= 512) break;
    }
    proc.kill("SIGKILL");
    await proc.exited;
    // Killed with some batches committed: the indexes dropped and the mark there, as the import left them.
    expect(seen).not.toBeNull();
    expect(seen!.n).toBeGreaterThanOrEqual(512);
    expect(seen!.n).toBeLessThan(NOTES);
    expect(look()).toMatchObject({ marked: true, secondary: 0 });

    const again = await run([BUN, "src/main.ts", "import", "--from", "markdown", vault], childEnv(home), ROOT, 60_000);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/: \d+ added, 0 merged, \d+ skipped/);
    const [, added, skipped] = /: (\d+) added, 0 merged, (\d+) skipped/.exec(again.stdout) ?? [];
    expect([Number(added) + Number(skipped), Number(skipped)]).toEqual([NOTES, seen!.n]);
    const rows = (sql: string) => homeRows(home, sql);
    expect((await rows("SELECT count(*) AS n FROM memories"))[0].n).toBe(NOTES);
    expect((await rows("SELECT count(*) AS n FROM links WHERE relationship <> 'related'"))[0].n).toBe(linked);
    // Whole again: the mark gone, every index as a fresh store has it, counts as the triggers keep them.
    expect(look()).toMatchObject({ marked: false });
    const fresh = tempHome();
    const ref = openStore(join(fresh, "memsvc.db"));
    const indexSql = "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name";
    const want = ref.sqlite.query<{ name: string; sql: string | null }, []>(indexSql).all();
    ref.close();
    expect(await rows(indexSql)).toEqual(want);
    expect(
      (
        await rows(
          `SELECT count(*) AS n FROM memories m WHERE m.link_count <>
             (SELECT count(*) FROM links l WHERE l.from_id = m.id) + (SELECT count(*) FROM links l WHERE l.to_id = m.id AND l.from_id <> m.id)`,
        )
      )[0].n,
    ).toBe(0);
    expect((await rows("PRAGMA integrity_check"))[0].integrity_check).toBe("ok");
    // And once more: nothing new.
    const third = await run([BUN, "src/main.ts", "import", "--from", "markdown", vault], childEnv(home), ROOT, 60_000);
    expect(third.stdout).toMatch(new RegExp(`: 0 added, 0 merged, ${NOTES} skipped`));
  },
  120_000,
);

/** Secondary (not unique) indexes of the tables an import into an empty store defers. */
function secondaryIndexes(d: Database): number {
  return d
    .query<{ n: number }, []>(
      `SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
         AND tbl_name IN ('memories', 'memory_tags', 'memory_primary_domain', 'links')`,
    )
    .get()!.n;
}
