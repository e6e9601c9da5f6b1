import { afterEach, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { homeRows } from "../helpers/engine";
import { buildClaudeCodeHome, buildClaudeMemDb } from "../helpers/claude-mem-db";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

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
