import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, hostPlatform } from "../../build";
import { PLATFORMS } from "../../src/platform/natives";
import { homeRows, onPostgres } from "../helpers/engine";
import { requestFrom } from "../helpers/server";
import { makeTinyModel } from "../helpers/tiny-model";
import { childEnv, freePort, ROOT, run, startProcess, tempHome, type Running } from "../helpers/process";
import { useTokenInConfig } from "../helpers/tokens";

// The compiled binary, copied alone into an empty folder: no node_modules, no
// sources beside it. One build per run (a few seconds).
let bin: string;
let out: string;
let server: Running | null = null;
beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "memsvc-build-"));
  const built = await buildBinary({ entry: join(ROOT, "src/main.ts"), outfile: join(out, "memsvc") });
  const lonely = mkdtempSync(join(tmpdir(), "memsvc-alone-"));
  bin = join(lonely, "memsvc");
  copyFileSync(built.outfile, bin);
  (await import("node:fs")).chmodSync(bin, 0o755);
  expect(readdirSync(lonely)).toEqual(["memsvc"]);
}, 180_000);
afterAll(() => {
  server?.proc.kill("SIGKILL");
  // Two copies of a 160 MB binary per run must not pile up in /tmp.
  for (const dir of [out, bin && join(bin, "..")]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the lone binary runs init, server and status, and serves ingest → search → get → update → delete", async () => {
  const home = tempHome();
  const port = await freePort();
  const env = childEnv(home, { MEMSVC_URL: `http://127.0.0.1:${port}` });
  const cwd = join(bin, "..");
  expect((await run([bin, "--version"], env, cwd)).stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
  const init = await run([bin, "init"], env, cwd);
  expect(init.code).toBe(0);
  let token = JSON.parse(readFileSync(join(home, "config.json"), "utf8")).token as string;
  if (onPostgres) {
    // Only database tokens authenticate on PostgreSQL: the first admin, made by the binary itself (docs/teams.md's bootstrap).
    const made = await run([bin, "token", "create", "--name", "ops", "--role", "admin"], env, cwd);
    expect(made.code).toBe(0);
    token = made.stdout.trim();
    useTokenInConfig(home, token);
  }

  server = await startProcess([bin, "server", "--port", String(port)], env, port, cwd);
  const status = await run([bin, "status"], env, cwd);
  expect(status.code).toBe(0);
  expect(status.stdout).toContain(token);

  const url = server.url;
  const ingest = await fetch(`${url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "The binary stores memories in SQLite with sqlite-vec", project: "bin" }),
  });
  expect(ingest.status).toBe(201);
  const { id } = (await ingest.json()) as { id: string };
  const search = (await (await fetch(`${url}/search?query=sqlite-vec%20memories&project=bin`)).json()) as any;
  expect(search.results[0].id).toBe(id);
  expect(search.results[0].matched_by).toContain("vector");
  const got = (await (await fetch(`${url}/memory?id=${id.slice(0, 8)}`)).json()) as any;
  expect(got.citation).toContain(id.slice(0, 8));
  const patch = await fetch(`${url}/memory`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, content: "The binary keeps vectors in vec0" }),
  });
  expect(((await patch.json()) as any).changes.content.after).toBe("The binary keeps vectors in vec0");
  // Both rule sets work inside the compiled binary: ours (the .netrc line) and secretlint's preset (a Shopify partner token).
  const partner = `shppa_${"Xy9".repeat(11)}`;
  const secretIngest = await fetch(`${url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: `Deploys use machine h login u password p4ss-w0rd and ${partner}`, project: "bin" }),
  });
  const secretId = ((await secretIngest.json()) as { id: string }).id;
  const stored = ((await (await fetch(`${url}/memory?id=${secretId}`)).json()) as any).memory.content as string;
  expect(stored).toBe("Deploys use machine h login u password [REDACTED:netrc-password] and [REDACTED:shopify-key]");
  expect((await fetch(`${url}/memory?id=${id}`, { method: "DELETE" })).status).toBe(200);
  expect((await fetch(`${url}/memory?id=${id}`)).status).toBe(404);

  // The memory browser and its shared files are embedded: no node_modules beside the binary.
  for (const [path, needle] of [
    ["/memories", "Memories · memsvc"],
    ["/assets/vendor/marked.js", "marked"],
    ["/assets/vendor/purify.js", "DOMPurify"],
    ["/favicon.svg", "<svg"],
    ["/assets/memories/app.js", "__memories"],
  ]) {
    const res = await fetch(`${url}${path}`);
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    expect(await res.text()).toContain(needle);
  }
  // One memory is left: the redaction check above.
  expect(((await (await fetch(`${url}/memories/list?limit=5`)).json()) as any).total).toBe(1);
  // The binary carries both engines: the memory is in the test engine's store (on PostgreSQL its schema, and no SQLite file in the home).
  expect(await homeRows(home, "SELECT id FROM memories")).toEqual([{ id: secretId }]);
  expect(existsSync(join(home, "memsvc.db"))).toBe(!onPostgres);

  const remoteNoToken = await requestFrom("127.0.0.2", `${url}/recent`);
  expect(remoteNoToken.status).toBe(401);
  const remoteToken = await requestFrom("127.0.0.2", `${url}/recent`, { headers: { authorization: `Bearer ${token}` } });
  expect(remoteToken.status).toBe(200);

  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  // The WAL checkpoint worker's code is inside the binary (a Worker from its text) and opened the store.
  if (!onPostgres) expect(server.stderr()).toContain("wal: a worker thread checkpoints the WAL");
  server = null;
}, 60_000);

test("the lone binary runs the ONNX embedder from the onnxruntime it carries (binding and library extracted side by side)", async () => {
  const home = tempHome();
  const port = await freePort();
  const env = childEnv(home);
  const cwd = join(bin, "..");
  const host = PLATFORMS[hostPlatform()];
  expect((await run([bin, "init"], env, cwd)).code).toBe(0);
  await makeTinyModel(join(home, "models"), "test/tiny-bge");
  const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, embedder: { model: "test/tiny-bge" } }));
  server = await startProcess([bin, "server", "--port", String(port)], env, port, cwd);
  const health = (await (await fetch(`${server.url}/health`)).json()) as any;
  expect(health.embedder.kind).toBe("onnx");
  expect(readdirSync(join(home, ".cache", JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version)).sort()).toEqual(
    // SQLite's natives are written out only when a SQLite store opens: not on PostgreSQL.
    [
      ...host.onnxruntime!.libraries,
      host.onnxruntime!.binding,
      ...(onPostgres ? [] : [host.sqliteVec.file, ...(host.customSqlite ? [host.customSqlite.file] : [])]),
    ].sort(),
  );
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  server = null;
}, 60_000);

test("the lone binary imports a Markdown folder with its reading thread (the worker is compiled in)", async () => {
  const home = tempHome();
  const env = childEnv(home);
  const im = await run([bin, "import", "--from", "markdown", join(ROOT, "test/fixtures/import/markdown/vault")], env, join(bin, ".."));
  expect(im.code).toBe(0);
  // A worker that did not start would have warned and read in the main thread.
  expect(im.stderr).not.toContain("worker thread");
  expect(im.stdout).toMatch(/: 11 added, 0 merged, 0 skipped/);
  expect((await homeRows(home, "SELECT count(*) AS n FROM memories"))[0].n).toBe(11);
});
