import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { prepareSqlite, sqliteVecLibrary } from "../../src/platform/natives";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addLink } from "../../src/core/graph";
import { fetchMemory, ingestMemory } from "../../src/core/memories";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";
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
    const r = await ingestMemory(s, { content: `portable memory ${i}: the ${["api", "db", "ui"][i % 3]} layer rule ${i}`, project: i % 2 ? "alpha" : "beta", memory_type: ["fact", "decision", "episode", "lesson"][i % 4], source_agent: "seed-box", session_date: `2026-0${1 + (i % 9)}-1${i % 10}` });
    ids.push(r.id!);
  }
  await addLink(s, ids[0], ids[5], "depends_on", 0.7);
  await fetchMemory(s, ids[3]);
  s.store.sqlite.run("INSERT INTO segments(key, session_id, memory_count, created_at) VALUES ('sess#1', 'sess', 2, 1)");
  const home = s.config.home;
  mkdirSync(join(home, "identity", "agents", "bot-1"), { recursive: true });
  writeFileSync(join(home, "identity", "persona.md"), "# Persona\nCareful.");
  writeFileSync(join(home, "identity", "agents", "bot-1", "style.md"), "Terse.");
  await s.close();
  return home;
}

function dump(dbFile: string) {
  prepareSqlite();
  const db = new Database(dbFile, { readonly: true });
  db.loadExtension(sqliteVecLibrary(), "sqlite3_vec_init");
  const out = {
    memories: db.query("SELECT id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy, created_at, updated_at, refreshed_at, strength, shown_count, used_count, last_shown_at, last_used_at, link_count FROM memories ORDER BY id").all(),
    links: db.query("SELECT from_id, to_id, relationship, weight, created_at FROM links ORDER BY from_id, to_id, relationship").all(),
    tags: db.query("SELECT memory_id, tag, weight FROM memory_tags ORDER BY memory_id, tag").all(),
    segments: db.query("SELECT * FROM segments").all(),
    events: db.query("SELECT memory_id, kind, at FROM memory_events ORDER BY id").all(),
    vectors: db.query<{ e: Uint8Array }, []>("SELECT m.id, v.embedding e FROM memory_vec v JOIN memories m ON m.seq = v.rowid ORDER BY m.id").all().map((r) => Buffer.from(r.e).toString("base64")),
    fts: db.query("SELECT count(*) n FROM memories_fts").get(),
  };
  db.close();
  return out;
}

test("export → import into a fresh home is lossless (with and without vectors)", async () => {
  const home = await seedHome();
  const original = dump(join(home, "memsvc.db"));
  for (const withVectors of [true, false]) {
    const file = join(tempHome(), "export.jsonl");
    const ex = await run([BUN, "src/main.ts", "export", "--out", file, ...(withVectors ? ["--vectors"] : [])], childEnv(home));
    expect(ex.code).toBe(0);
    expect(ex.stdout).toContain("exported 25 memories");
    const fresh = tempHome();
    const im = await run([BUN, "src/main.ts", "import", file], childEnv(fresh));
    expect(im.code).toBe(0);
    expect(im.stdout).toContain(withVectors ? "25 vectors reused, 0 re-embedded" : "0 vectors reused, 25 re-embedded");
    expect(dump(join(fresh, "memsvc.db"))).toEqual(original);
    expect(readFileSync(join(fresh, "identity", "persona.md"), "utf8")).toBe("# Persona\nCareful.");
    expect(readFileSync(join(fresh, "identity", "agents", "bot-1", "style.md"), "utf8")).toBe("Terse.");
    // A second import into the now non-empty home is refused and changes nothing.
    const again = await run([BUN, "src/main.ts", "import", file], childEnv(fresh));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds 25 memories/);
  }
}, 60_000);

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
  const db = new Database(join(fresh, "memsvc.db"), { readonly: true });
  expect(db.query("SELECT count(*) n FROM memories").get()).toEqual({ n: 0 });
  db.close();
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
      const r = await fetch(`${server!.url}/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ content: `written during backup ${i}` }) });
      expect(r.status).toBe(201);
      acked++;
      if (backupDone) ackedAfterBackup++;
      if (acked === 3) started();
    }
  })();
  await writing;
  const before = acked;
  const out = join(tempHome(), "copy.db");
  const b = await run([BUN, "src/main.ts", "backup", "--out", out], childEnv(home));
  backupDone = true;
  await writes;
  expect(b.code).toBe(0);
  expect(before).toBeGreaterThanOrEqual(3);
  expect(ackedAfterBackup).toBeGreaterThanOrEqual(3);
  const db = new Database(out, { readonly: true });
  expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  const n = (db.query("SELECT count(*) n FROM memories").get() as { n: number }).n;
  // Every write acknowledged before the backup began is in the copy; of those acknowledged after it
  // ended, only the one in flight at that moment can be (the writer sends one at a time).
  expect(n).toBeGreaterThanOrEqual(25 + before);
  expect(n).toBeLessThanOrEqual(25 + acked - ackedAfterBackup + 1);
  expect(db.query("SELECT count(*) n FROM memories_fts").get()).toEqual({ n });
  db.close();
  const twice = await run([BUN, "src/main.ts", "backup", "--out", out], childEnv(home));
  expect(twice.code).toBe(1);
  expect(twice.stderr).toMatch(/exists/);
}, 60_000);
