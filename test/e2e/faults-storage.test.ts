import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "bun";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { checkHome } from "../helpers/integrity";
import { BUN, childEnv, freePort, ROOT, run, startProcess, type Running } from "../helpers/process";
import { onPostgres, testDatabaseUrl } from "../helpers/engine";
import { startRelay } from "../helpers/tcp-relay";

/**
 * A full disk and a read-only home, for real: tmpfs and read-only bind
 * mounts. That needs root and a kernel that lets this container mount (root
 * alone is not enough: chmod does not stop root from writing). Where mounting
 * is not possible the tests report as skipped, with the reason below.
 */

const TOKEN = "storage-token-0123456789abcdef";
const CACHE = join(tmpdir(), "memsvc-faults-cache");
const mounts: string[] = [];
const servers: Running[] = [];
let llm: FakeLlm;

const sh = (...cmd: string[]) => spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });

function mountProbe(): string | null {
  if (process.getuid?.() !== 0) return "not root: a full disk and a read-only home need tmpfs and bind mounts (chmod does not apply to root either)";
  const dir = mkdtempSync(join(tmpdir(), "memsvc-mount-probe-"));
  const r = sh("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir);
  if (r.exitCode !== 0) return `mount is not permitted here: ${r.stderr.toString().trim()}`;
  sh("umount", dir);
  return null;
}
const cannotMount = mountProbe();
if (cannotMount) console.warn(`faults-storage: skipped: ${cannotMount}`);

function mount(...args: string[]): void {
  const r = sh("mount", ...args);
  if (r.exitCode !== 0) throw new Error(`mount ${args.join(" ")}: ${r.stderr.toString()}`);
  mounts.push(args.at(-1)!);
}

beforeAll(() => {
  llm = startFakeLlm();
});
afterEach(() => {
  for (const s of servers.splice(0)) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
  for (const m of mounts.splice(0).reverse()) sh("umount", "-l", m);
});
afterAll(() => llm.stop());

function makeHome(dir: string): string {
  const home = join(dir, "home");
  mkdirSync(join(home, "identity"), { recursive: true });
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ token: TOKEN, agentId: crypto.randomUUID(), llm: { baseURL: llm.baseURL, model: "fake", apiKey: "k" } }),
  );
  return home;
}

async function serve(home: string): Promise<Running> {
  const port = await freePort();
  const s = await startProcess([BUN, join(ROOT, "src/main.ts"), "server", "--port", String(port)], childEnv(home, { MEMSVC_CACHE_DIR: CACHE }), port);
  servers.push(s);
  return s;
}

const send = (s: Running, method: string, path: string, body: unknown) =>
  fetch(`${s.url}${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function expectStorageError(res: Response, reason: string): Promise<void> {
  expect(res.status).toBe(503);
  const e = ((await res.json()) as { error: { code: string; message: string; reason: string } }).error;
  expect(e).toMatchObject({ code: "unavailable", reason, message: expect.stringContaining("nothing was written") });
}

/** Fills the filesystem holding `dir` to the last byte. */
function fill(dir: string): string {
  const file = join(dir, "filler");
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOSPC") throw e;
    for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 2)) {
      try {
        for (;;) writeSync(fd, chunk.subarray(0, size));
      } catch {
        /* this size no longer fits: try a smaller one */
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

describe("a full disk", () => {
  // SQLite only (also below): a full or read-only home is the SQLite file's disk; PostgreSQL's disk is the database server's.
  test.skipIf(cannotMount !== null || onPostgres)(
    "writes fail with 503 disk_full, nothing is half-written, the server keeps serving, and writes resume once space is freed",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "memsvc-full-"));
      mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", dir);
      const home = makeHome(dir);
      const server = await serve(home);
      const acked: string[] = [];
      const ingest = async (content: string) => {
        const res = await send(server, "POST", "/ingest", { content });
        if (res.status === 201) acked.push(((await res.json()) as { id: string }).id);
        return res;
      };
      for (let i = 0; i < 5; i++) expect((await ingest(`Before the disk filled up: fact ${i} about the backup rotation.`)).status).toBe(201);

      const filler = fill(dir);
      // SQLite may still reuse free pages and WAL space: write until the disk says no.
      let refused: Response | null = null;
      for (let i = 0; i < 40 && !refused; i++) {
        const res = await ingest(`While the disk is full ${i}: ${"the archive job copies every shard twice. ".repeat(2000)}`);
        if (res.status !== 201) refused = res;
      }
      expect(refused).not.toBeNull();
      await expectStorageError(refused!, "disk_full");
      llm.script(memoriesReply("Distilled while the disk was full: the archive job copies every shard twice, which doubles the storage bill."));
      await expectStorageError(
        await send(server, "POST", "/distill", {
          text: `We found the archive job copies every shard twice. ${"Detail line. ".repeat(3000)}`,
          session_id: "full-disk",
        }),
        "disk_full",
      );
      const identityBefore = readdirSync(join(home, "identity"));
      await expectStorageError(
        await send(server, "PUT", "/identity", { sections: { soul: `I am written to a full disk. ${"x".repeat(64 * 1024)}` } }),
        "disk_full",
      );
      expect(readdirSync(join(home, "identity"))).toEqual(identityBefore);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      expect((await fetch(`${server.url}/search?query=backup%20rotation`)).status).toBe(200);

      unlinkSync(filler);
      expect((await ingest("After space was freed: writes work again without a restart.")).status).toBe(201);
      expect((await send(server, "PUT", "/identity", { sections: { soul: "I survived a full disk." } })).status).toBe(200);
      server.proc.kill("SIGTERM");
      expect(await server.proc.exited).toBe(0);

      const check = await checkHome(home);
      expect(check.problems).toEqual([]);
      // Exactly the acknowledged memories: no refused write left a row behind.
      expect(check.memories).toBe(acked.length);
      for (const id of acked) expect(check.ids.has(id)).toBe(true);
      expect(check.perSession.get("full-disk") ?? 0).toBe(0);
      expect(readFileSync(join(home, "identity", "soul.md"), "utf8")).toBe("I survived a full disk.");
    },
    60_000,
  );
});

describe("a read-only home", () => {
  test.skipIf(cannotMount !== null || onPostgres)(
    "the server refuses to start with one clear line and leaves the database untouched",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "memsvc-ro-"));
      const home = makeHome(dir);
      const first = await serve(home);
      expect((await send(first, "POST", "/ingest", { content: "Stored before the home became read-only." })).status).toBe(201);
      first.proc.kill("SIGTERM");
      expect(await first.proc.exited).toBe(0);
      const db = readFileSync(join(home, "memsvc.db"));

      const ro = mkdtempSync(join(tmpdir(), "memsvc-ro-view-"));
      mount("--bind", dir, ro);
      mount("-o", "remount,bind,ro", ro);
      const port = await freePort();
      const r = await run(
        [BUN, join(ROOT, "src/main.ts"), "server", "--port", String(port)],
        childEnv(join(ro, "home"), { MEMSVC_CACHE_DIR: CACHE }),
        ROOT,
        20_000,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/memsvc server: cannot open .*memsvc\.db: storage failure \(SQLITE_\w+\): .*read-only/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(readFileSync(join(home, "memsvc.db")).equals(db)).toBe(true);
    },
    60_000,
  );

  // SQLite only: on PostgreSQL identity sections live in the database; the home's identity folder is not written.
  test.skipIf(cannotMount !== null || onPostgres)(
    "identity folder turned read-only while running: PUT is 503 read_only, the rest keeps working, writes resume",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "memsvc-ro-id-"));
      const home = makeHome(dir);
      writeFileSync(join(home, "identity", "soul.md"), "I was here first.");
      const server = await serve(home);
      const identity = join(home, "identity");
      mount("--bind", identity, identity);
      mount("-o", "remount,bind,ro", identity);
      await expectStorageError(
        await send(server, "PUT", "/identity", { sections: { soul: "Rewritten on a read-only disk.", style: "New section." } }),
        "read_only",
      );
      expect(readdirSync(identity).sort()).toEqual(["soul.md"]);
      expect(readFileSync(join(identity, "soul.md"), "utf8")).toBe("I was here first.");
      expect((await fetch(`${server.url}/identity`)).status).toBe(200);
      expect((await send(server, "POST", "/ingest", { content: "Memories are still stored while identity is read-only." })).status).toBe(201);
      sh("umount", identity);
      mounts.splice(mounts.indexOf(identity), 1);
      expect((await send(server, "PUT", "/identity", { sections: { soul: "Rewritten after the disk came back." } })).status).toBe(200);
      server.proc.kill("SIGTERM");
      expect(await server.proc.exited).toBe(0);
      expect((await checkHome(home)).problems).toEqual([]);
    },
    60_000,
  );
});

describe("the database goes away", () => {
  // PostgreSQL only: SQLite's database is a file the server process itself opens, whose faults are the
  // full disk and read-only home above. Here the server reaches PostgreSQL through a TCP relay that the
  // test cuts (every connection dropped, new ones closed at once) and restores: what a database restart
  // or a network partition looks like to the server, while the database keeps its data.
  test.skipIf(!onPostgres)(
    "cut mid-burst: requests answer 503 with a reason (no 500, no crash), acknowledged writes survive, the service recovers once it is back",
    async () => {
      const relay = await startRelay(testDatabaseUrl());
      try {
        const home = makeHome(mkdtempSync(join(tmpdir(), "memsvc-db-gone-")));
        const port = await freePort();
        const server = await startProcess(
          [BUN, join(ROOT, "src/main.ts"), "server", "--port", String(port)],
          childEnv(home, { MEMSVC_CACHE_DIR: CACHE, MEMSVC_DATABASE_URL: relay.url }),
          port,
        );
        servers.push(server);
        const acked: string[] = [];
        const refused: { status: number; reason: string | undefined }[] = [];
        let n = 0;
        let cutAt = -1;
        let stopping = false;
        const writer = async () => {
          while (!stopping) {
            const i = n++;
            const res = await send(server, "POST", "/ingest", { content: `Burst write ${i}: the relay ${i % 9} forwards shard ${i * 7} to replica ${i % 4}.` });
            if (res.status === 201) acked.push(((await res.json()) as { id: string }).id);
            else refused.push({ status: res.status, reason: ((await res.json()) as { error?: { reason?: string } }).error?.reason });
          }
        };
        const writers = [writer(), writer(), writer()];
        for (const deadline = Date.now() + 30_000; acked.length < 5 && Date.now() < deadline; ) await Bun.sleep(10);
        expect(acked.length).toBeGreaterThanOrEqual(5);
        await relay.cut();
        const t0 = performance.now();
        cutAt = acked.length;
        for (const deadline = Date.now() + 30_000; refused.length < 6 && Date.now() < deadline; ) await Bun.sleep(10);
        // Reads and the other writes answer the same way while the database is away.
        const reads = [
          await fetch(`${server.url}/search?query=relay%20shard`),
          await fetch(`${server.url}/memory?id=${acked[0]}`),
          await send(server, "PUT", "/identity", { sections: { soul: "Written while the database was away." } }),
        ];
        const health = await fetch(`${server.url}/health`);
        const t1 = performance.now();
        stopping = true;
        await Promise.all(writers);
        expect(refused.length).toBeGreaterThanOrEqual(6);
        // No 500 and no other reason: every refusal is the storage failure, named.
        expect(new Set(refused.map((r) => `${r.status} ${r.reason}`))).toEqual(new Set(["503 unreachable"]));
        for (const res of reads) {
          expect(res.status).toBe(503);
          expect(((await res.json()) as { error: { reason: string } }).error.reason).toBe("unreachable");
        }
        expect(health.status).not.toBe(500);
        expect(server.proc.exitCode).toBeNull();
        // Writes in flight at the cut may have been acknowledged before it took effect; none after the burst stopped.
        expect(acked.length).toBeGreaterThanOrEqual(cutAt);

        const t2 = performance.now();
        await relay.restore();
        let back: Response | null = null;
        for (const deadline = Date.now() + 30_000; Date.now() < deadline; await Bun.sleep(100)) {
          back = await send(server, "POST", "/ingest", { content: "Written once the database answered again, without a restart." });
          if (back.status === 201) break;
        }
        const t3 = performance.now();
        expect(back?.status).toBe(201);
        acked.push(((await back!.json()) as { id: string }).id);
        expect((await fetch(`${server.url}/memory?id=${acked[0]}`)).status).toBe(200);
        expect((await fetch(`${server.url}/search?query=relay%20shard`)).status).toBe(200);
        expect((await send(server, "PUT", "/identity", { sections: { soul: "Written after the database came back." } })).status).toBe(200);
        server.proc.kill("SIGTERM");
        expect(await server.proc.exited).toBe(0);

        const check = await checkHome(home);
        expect(check.problems).toEqual([]);
        for (const id of acked) expect(check.ids.has(id)).toBe(true);
        console.log(
          JSON.stringify({
            database_gone: {
              acked_before_cut: cutAt,
              acked_total: acked.length,
              refused_503: refused.length,
              health_while_gone: health.status,
              stored: check.memories,
              ms_refusing: Math.round(t1 - t0),
              ms_draining: Math.round(t2 - t1),
              ms_to_recover: Math.round(t3 - t2),
            },
          }),
        );
      } finally {
        await relay.stop();
      }
    },
    120_000,
  );
});
