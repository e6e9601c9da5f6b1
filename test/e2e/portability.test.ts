import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addLink } from "../../src/core/graph";
import { sectionStore } from "../../src/core/identity";
import { fetchMemory } from "../../src/core/memories";
import { ingestMemory } from "../../src/core/ingest";
import { dbRows, homeRows, onPostgres } from "../helpers/engine";
import { BUN, childEnv, freePort, ROOT, run, startProcess, tempHome, type Running } from "../helpers/process";
import { makeServices } from "../helpers/services";

let server: Running | null = null;
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

async function seedHome(): Promise<string> {
  const s = makeServices();
  const ids: string[] = [];
  for (let i = 0; i < 25; i++) {
    const r = await ingestMemory(s, {
      content: `portable memory ${i}: the ${["api", "db", "ui"][i % 3]} layer rule ${i}`,
      project: i % 2 ? "alpha" : "beta",
      memory_type: ["fact", "decision", "episode", "lesson"][i % 4],
      source_agent: "seed-box",
      session_date: `2026-0${1 + (i % 9)}-1${i % 10}`,
    });
    ids.push(r.id!);
  }
  await addLink(s, ids[0], ids[5], "depends_on", 0.7);
  await fetchMemory(s, ids[3]);
  await dbRows(s, "INSERT INTO segments(key, session_id, memory_count, created_at) VALUES ('sess#1', 'sess', 2, 1)");
  // Where the engine keeps identity: the home's files on SQLite, the database on PostgreSQL.
  const identity = sectionStore(s, () => {});
  await identity.writeSections(null, [["persona", "# Persona\nCareful."]], Date.now());
  await identity.writeSections("bot-1", [["style", "Terse."]], Date.now());
  const home = s.config.home;
  await s.close();
  return home;
}

/** Every row an import must reproduce, read from the home's store on the test engine. */
async function dump(home: string) {
  const q = (text: string) => homeRows(home, text);
  return {
    memories: await q(
      "SELECT id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy, created_at, updated_at, refreshed_at, strength, shown_count, used_count, last_shown_at, last_used_at, link_count FROM memories ORDER BY id",
    ),
    links: await q("SELECT from_id, to_id, relationship, weight, created_at FROM links ORDER BY from_id, to_id, relationship"),
    tags: await q("SELECT memory_id, tag, weight FROM memory_tags ORDER BY memory_id, tag"),
    segments: await q("SELECT * FROM segments"),
    events: await q("SELECT memory_id, kind, at FROM memory_events ORDER BY id"),
    vectors: onPostgres
      ? (await q("SELECT m.id, v.embedding::text AS e FROM memory_vec v JOIN memories m ON m.seq = v.seq ORDER BY m.id")).map((r) => r.e)
      : (await q("SELECT m.id, v.embedding e FROM memory_vec v JOIN memories m ON m.seq = v.rowid ORDER BY m.id")).map((r) =>
          Buffer.from(r.e).toString("base64"),
        ),
    fts: (await q(onPostgres ? "SELECT count(*) AS n FROM memories WHERE fts IS NOT NULL" : "SELECT count(*) n FROM memories_fts"))[0],
  };
}

/** A home's identity sections as [agent, name, body], wherever its engine keeps them. */
async function identityOf(home: string): Promise<[string | null, string, string][]> {
  const s = makeServices({ home });
  try {
    const identity = sectionStore(s, () => {});
    const out: [string | null, string, string][] = [];
    for (const agent of [null, ...(await identity.agentScopes())]) for (const [name, f] of await identity.readScope(agent)) out.push([agent, name, f.body]);
    return out;
  } finally {
    await s.close();
  }
}

test("export → import into a fresh home is lossless (with and without vectors)", async () => {
  const home = await seedHome();
  const original = await dump(home);
  for (const withVectors of [true, false]) {
    const file = join(tempHome(), "export.jsonl");
    const ex = await run([BUN, "src/main.ts", "export", "--out", file, ...(withVectors ? ["--vectors"] : [])], childEnv(home));
    expect(ex.code).toBe(0);
    expect(ex.stderr).toContain(`exported 25 memories, `);
    expect(ex.stderr).toContain(` to ${file}\n`);
    const fresh = tempHome();
    const im = await run([BUN, "src/main.ts", "import", file], childEnv(fresh));
    expect(im.code).toBe(0);
    expect(im.stdout).toContain(withVectors ? "25 vectors reused, 0 re-embedded" : "0 vectors reused, 25 re-embedded");
    expect(await dump(fresh)).toEqual(original);
    expect(ex.stderr).toContain("2 identity sections");
    expect(await identityOf(fresh)).toEqual([
      [null, "persona", "# Persona\nCareful."],
      ["bot-1", "style", "Terse."],
    ]);
    // A second import into the now non-empty home is refused and changes nothing.
    const again = await run([BUN, "src/main.ts", "import", file], childEnv(fresh));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds 25 memories/);
  }
}, 60_000);

test("export without --out writes ./memsvc-export-<date>.jsonl and says where on stderr: stdout stays empty, so `export > file` is no silent mistake", async () => {
  const home = tempHome();
  // One memory: the counts read "1 memory", not "1 memories".
  const s = makeServices({ home });
  try {
    await ingestMemory(s, { content: "The shop-api deploys go out from the release branch only." });
  } finally {
    await s.close();
  }
  const cwd = tempHome();
  const ex = await run([BUN, join(ROOT, "src/main.ts"), "export"], childEnv(home), cwd);
  expect(ex.code).toBe(0);
  expect(ex.stdout).toBe("");
  const file = join(cwd, `memsvc-export-${new Date().toISOString().slice(0, 10)}.jsonl`);
  expect(ex.stderr).toBe(`exported 1 memory, 0 links, 0 identity sections to ${file}\n`);
  expect(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes('"kind":"memory"')),
  ).toHaveLength(1);
}, 30_000);

test("a corrupt export line imports nothing", async () => {
  const home = await seedHome();
  const file = join(tempHome(), "export.jsonl");
  await run([BUN, "src/main.ts", "export", "--out", file], childEnv(home));
  const lines = readFileSync(file, "utf8").split("\n");
  lines.splice(10, 0, '{"kind":"memory","id":"nope"}');
  writeFileSync(file, lines.join("\n"));
  const fresh = tempHome();
  const im = await run([BUN, "src/main.ts", "import", file], childEnv(fresh));
  expect(im.code).toBe(1);
  expect(im.stderr).toMatch(/:11: memory field id/);
  expect(await homeRows(fresh, "SELECT count(*) AS n FROM memories")).toEqual([{ n: 0 }]);
}, 60_000);

test("backup takes a consistent copy while the server is writing", async () => {
  const home = await seedHome();
  const port = await freePort();
  server = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], childEnv(home), port);
  // The writer runs until after the backup has finished, and the backup
  // starts only once writes are being acknowledged: the two overlap by
  // construction, not by a guess about how long either takes.
  let acked = 0;
  let backupDone = false;
  let ackedAfterBackup = 0;
  let started!: () => void;
  const writing = new Promise<void>((r) => (started = r));
  const writes = (async () => {
    for (let i = 0; !backupDone || ackedAfterBackup < 3; i++) {
      const r = await fetch(`${server!.url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: `written during backup ${i}` }),
      });
      expect(r.status).toBe(201);
      acked++;
      if (backupDone) ackedAfterBackup++;
      if (acked === 3) started();
    }
  })();
  await writing;
  const before = acked;
  // SQLite: a copy of the database file. PostgreSQL: a logical export with vectors and identity (docs/operations.md: Backups; docs/teams.md: Export, import and backups on PostgreSQL).
  const out = join(tempHome(), onPostgres ? "copy.jsonl" : "copy.db");
  const b = await run([BUN, "src/main.ts", "backup", "--out", out], childEnv(home));
  backupDone = true;
  await writes;
  expect(b.code).toBe(0);
  expect(before).toBeGreaterThanOrEqual(3);
  expect(ackedAfterBackup).toBeGreaterThanOrEqual(3);
  let n: number;
  if (onPostgres) {
    expect(b.stdout).toContain("a logical export: restore with memsvc import");
    // The backup is restorable: import it into a fresh home and look at what arrived.
    const fresh = tempHome();
    const im = await run([BUN, "src/main.ts", "import", out], childEnv(fresh));
    expect(im.code).toBe(0);
    n = (await homeRows<{ n: number }>(fresh, "SELECT count(*) AS n FROM memories"))[0].n;
    expect(im.stdout).toContain(`${n} vectors reused, 0 re-embedded`);
    expect(im.stdout).toContain("2 identity sections");
    expect(await homeRows(fresh, "SELECT count(*) AS n FROM memory_vec")).toEqual([{ n }]);
  } else {
    const db = new Database(out, { readonly: true });
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    n = (db.query("SELECT count(*) n FROM memories").get() as { n: number }).n;
    expect(db.query("SELECT count(*) n FROM memories_fts").get()).toEqual({ n });
    db.close();
  }
  // Every write acknowledged before the backup began is in the copy; of those acknowledged after it
  // ended, only the one in flight at that moment can be (the writer sends one at a time).
  expect(n).toBeGreaterThanOrEqual(25 + before);
  expect(n).toBeLessThanOrEqual(25 + acked - ackedAfterBackup + 1);
  const twice = await run([BUN, "src/main.ts", "backup", "--out", out], childEnv(home));
  expect(twice.code).toBe(1);
  expect(twice.stderr).toMatch(/exists/);
}, 60_000);
