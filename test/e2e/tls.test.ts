import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, type Subprocess } from "bun";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { readRuntimeFile } from "../../src/runtime-file";
import { BUN, childEnv, freePort, ROOT, run, tempHome } from "../helpers/process";
import { TEST_TOKEN } from "../helpers/services";
import { adminToken } from "../helpers/tokens";

/**
 * Native TLS end to end: a real `memsvc server` process serving a certificate
 * this test makes with openssl (Debian's), reached over HTTPS by fetch and by
 * `memsvc status`; plain HTTP on that port gets no HTTP answer; a renewed
 * certificate written over the files is served without a restart.
 */
const openssl = Bun.which("openssl");
if (!openssl) throw new Error("openssl is needed for the TLS test (Debian: apt-get install -y openssl)");

function makeCert(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const r = Bun.spawnSync(
    [
      openssl!,
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      `/CN=memsvc-test-${name}`,
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    { stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`);
  chmodSync(key, 0o600);
  return { cert, key };
}

let home: string;
let token: string;
let port: number;
let proc: Subprocess<"ignore", "pipe", "pipe">;
let log = "";
let live: { cert: string; key: string };
let first: { cert: string; key: string };
let second: { cert: string; key: string };

const pem = (f: string) => readFileSync(f, "utf8");
/** fetch trusting exactly `caFile` (a self-signed certificate is its own CA). */
const get = (path: string, caFile: string, headers: Record<string, string> = {}) =>
  fetch(`https://127.0.0.1:${port}${path}`, { headers, tls: { ca: pem(caFile) } } as RequestInit);

beforeAll(async () => {
  home = tempHome();
  const dir = join(home, "tls");
  mkdirSync(dir, { mode: 0o700 });
  first = makeCert(dir, "first");
  second = makeCert(dir, "second");
  // The paths the server watches; renewals are written over them.
  live = { cert: join(dir, "server.crt"), key: join(dir, "server.key") };
  writeFileSync(live.cert, pem(first.cert));
  writeFileSync(live.key, pem(first.key), { mode: 0o600 });
  writeFileSync(join(home, "config.json"), JSON.stringify({ token: TEST_TOKEN, tls: live }), { mode: 0o600 });
  // On PostgreSQL only database tokens authenticate: an admin token of the home's database, also its config token.
  token = await adminToken(home);
  port = await freePort();
  proc = spawn([BUN, join(ROOT, "src/main.ts"), "server", "--port", String(port)], {
    env: childEnv(home, { MEMSVC_LOCALHOST_BYPASS: "" }),
    cwd: ROOT,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  void (async () => {
    const reader = proc.stderr.getReader();
    const dec = new TextDecoder();
    for (let r = await reader.read(); !r.done; r = await reader.read()) log += dec.decode(r.value, { stream: true });
  })();
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}: ${log}`);
    if (Date.now() > deadline) throw new Error(`no HTTPS answer within 60 s: ${log}`);
    try {
      if ((await get("/health", first.cert)).ok) break;
    } catch {
      /* not up yet */
    }
    await Bun.sleep(50);
  }
});

afterAll(async () => {
  proc?.kill("SIGTERM");
  await proc?.exited;
});

describe("native TLS", () => {
  test("serves HTTPS with the configured certificate and says so in the log and server.json", async () => {
    const health = await get("/health", first.cert);
    expect(health.status).toBe(200);
    expect(((await health.json()) as any).status).toBe("ok");
    expect((await get("/recent", first.cert, { authorization: `Bearer ${token}` })).status).toBe(200);
    // Without trusting the certificate a client refuses it.
    await expect(fetch(`https://127.0.0.1:${port}/health`)).rejects.toThrow(/self.signed|certificate/i);
    expect(readRuntimeFile(home)).toMatchObject({ url: `https://127.0.0.1:${port}`, tls: true });
    expect(log).toContain(`listening on https://127.0.0.1:${port}`);
    expect(log).toContain("CN=memsvc-test-first");
  });

  test("plain HTTP on the TLS port gets no HTTP answer", async () => {
    const bytes = await new Promise<Buffer>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
      let got = Buffer.alloc(0);
      socket.on("data", (d) => (got = Buffer.concat([got, Buffer.from(d)])));
      socket.on("close", () => resolve(got));
      socket.on("error", () => resolve(got));
      setTimeout(() => (socket.destroy(), resolve(got)), 5_000);
    });
    // Nothing, or a TLS alert record (content type 21): never an HTTP status line.
    expect(bytes.toString("latin1")).not.toContain("HTTP/");
    if (bytes.length > 0) expect(bytes[0]).toBe(21);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });

  test("`memsvc status` on the server's home reaches it over HTTPS, trusting its tls.cert", async () => {
    const r = await run([BUN, join(ROOT, "src/main.ts"), "status", "--json"], childEnv(home), ROOT, 30_000);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "ok", url: `https://127.0.0.1:${port}`, url_from: "server.json" });
  });

  test("a renewed certificate written over the files is served without a restart; a broken one is skipped", async () => {
    const pid = readRuntimeFile(home)!.pid;
    // As renewal tools do: write beside, then rename over (the certificate first, then its key).
    writeFileSync(`${live.cert}.new`, pem(second.cert));
    renameSync(`${live.cert}.new`, live.cert);
    writeFileSync(`${live.key}.new`, pem(second.key), { mode: 0o600 });
    renameSync(`${live.key}.new`, live.key);
    const deadline = Date.now() + 20_000;
    let served = false;
    while (!served && Date.now() < deadline) {
      served = await get("/health", second.cert).then(
        (r) => r.ok,
        () => false,
      );
      if (!served) await Bun.sleep(200);
    }
    expect(served).toBe(true);
    await expect(get("/health", first.cert)).rejects.toThrow();
    expect(proc.exitCode).toBeNull();
    expect(readRuntimeFile(home)!.pid).toBe(pid);
    expect(log).toContain("now serving");
    expect(log).toContain("CN=memsvc-test-second");

    // A key that does not belong to the certificate: logged, and the server keeps the pair it has.
    writeFileSync(live.key, pem(first.key), { mode: 0o600 });
    const until = Date.now() + 10_000;
    while (!log.includes("cannot be used") && Date.now() < until) await Bun.sleep(200);
    expect(log).toMatch(/certificate files changed but cannot be used \(.*is not the key of the certificate/);
    expect((await get("/health", second.cert)).status).toBe(200);
  });
});
