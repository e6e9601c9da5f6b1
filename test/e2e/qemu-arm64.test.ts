import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLATFORMS } from "../../src/platform/natives";
import { allPlatformBinaries, DIST_TIMEOUT_MS } from "../helpers/dist";
import { exeFormat } from "../helpers/exe-format";
import { onPostgres } from "../helpers/engine";
import { childEnv, freePort, ROOT, run, tempHome } from "../helpers/process";
import { qemuMissing, startTimed, underQemu, type TimedServer } from "../helpers/qemu";

// The linux-arm64 release binary, alone in an empty folder, run on this x64
// machine through qemu user mode: the only foreign binary that can really run
// here. Offline embedder: onnxruntime cannot load under qemu user mode (its CPU
// detection crashes reading the x64 host's /proc/cpuinfo; a plain C dlopen of the
// arm64 library crashes the same way), so the ONNX files are checked only
// structurally (platforms.test.ts). What it proves is
// that the arm64 Bun runtime, its bundled code and the arm64 sqlite-vec it
// carries work together. Start-up figures: bench/qemu-start.ts.

// PostgreSQL run: engine-independent (what this proves is the arm64 runtime and natives; binary.test.ts runs
// this machine's binary against PostgreSQL): covered by the SQLite run, which keeps CI within its time.
const missing = onPostgres ? "engine-independent: covered by the SQLite run" : qemuMissing();
if (missing) console.log(`linux-arm64 qemu test skipped: ${missing}`);
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
let bin: string;
let server: TimedServer | null = null;

beforeAll(async () => {
  if (missing) return;
  const dist = await allPlatformBinaries();
  const lonely = mkdtempSync(join(tmpdir(), "memsvc-arm64-"));
  bin = join(lonely, PLATFORMS["linux-arm64"].binary);
  copyFileSync(join(dist.dir, PLATFORMS["linux-arm64"].binary), bin);
  chmodSync(bin, 0o755);
}, DIST_TIMEOUT_MS);
afterAll(() => {
  server?.proc.kill("SIGKILL");
  if (bin) rmSync(join(bin, ".."), { recursive: true, force: true });
});

test.skipIf(missing !== null)(
  "linux-arm64 binary under qemu: init, server, ingest, search, recall-index, status",
  async () => {
    const home = tempHome();
    const port = await freePort();
    const env = childEnv(home, { MEMSVC_URL: `http://127.0.0.1:${port}` });
    const cwd = join(bin, "..");
    const slow = 120_000;

    expect((await run(underQemu([bin, "--version"]), env, cwd, slow)).stdout.trim()).toBe(VERSION);
    const init = await run(underQemu([bin, "init"]), env, cwd, slow);
    expect(init.code).toBe(0);
    const token = JSON.parse(readFileSync(join(home, "config.json"), "utf8")).token as string;

    server = await startTimed(underQemu([bin, "server", "--port", String(port)]), env, port, cwd);
    console.log(`linux-arm64 under qemu: start to first /health 200 in ${Math.round(server.startMs)} ms`);

    // The sqlite-vec it loaded is the arm64 one it carries, written out to the cache folder.
    const cached = join(home, ".cache", VERSION, "vec0.so");
    expect(readdirSync(join(home, ".cache", VERSION))).toContain("vec0.so");
    expect(exeFormat(readFileSync(cached))).toMatchObject({ format: "elf", arch: "arm64", kind: "library" });

    const url = server.url;
    expect(((await (await fetch(`${url}/health`)).json()) as any).embedder.kind).toBe("fallback");
    const ingest = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "The arm64 build keeps its vectors in sqlite-vec under emulation", project: "arm" }),
    });
    expect(ingest.status).toBe(201);
    const { id } = (await ingest.json()) as { id: string };

    const search = (await (await fetch(`${url}/search?query=sqlite-vec%20vectors%20arm64&project=arm`)).json()) as any;
    expect(search.results[0].id).toBe(id);
    expect(search.results[0].matched_by).toContain("vector");

    const recall = await fetch(`${url}/recall-index`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ session_id: "qemu-1", prompt: "where does the arm64 build keep its sqlite-vec vectors?", project: "arm" }),
    });
    expect(recall.status).toBe(200);
    const index = (await recall.json()) as { block: string | null; shown: string[] };
    expect(index.shown).toEqual([id]);
    expect(index.block).toContain(id.slice(0, 8));

    const status = await run(underQemu([bin, "status"]), env, cwd, slow);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(token);

    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    server = null;
  },
  600_000,
);
