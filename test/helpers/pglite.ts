import { spawn, type Subprocess } from "bun";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const SCRIPT = join(import.meta.dir, "pglite-server.ts");

export interface PgliteProcess {
  url: string;
  /** The database process (bench/ reads its RSS and CPU). */
  pid: number;
  /**
   * Started with `dumpTo`: writes the data directory there (CHECKPOINT, then
   * an uncompressed tar a later `load` starts from) and resolves when the file
   * is complete. Nothing may be writing to the database meanwhile.
   */
  dump(): Promise<void>;
  stop(): void;
}

export interface PgliteOptions {
  vector?: boolean;
  /** A data directory `dump()` wrote: the database starts with its content (still in memory). */
  load?: string;
  /** Where `dump()` writes. */
  dumpTo?: string;
}

/**
 * Starts test/helpers/pglite-server.ts as a child process and waits for its
 * URL. Out of process on purpose: a test that blocks its own event loop
 * (spawnSync of a memsvc command that needs the database) would otherwise
 * stall the database it waits for. The child exits with this process.
 */
export async function startPglite(opts: PgliteOptions = {}): Promise<PgliteProcess> {
  const args = [
    process.execPath,
    SCRIPT,
    "--parent",
    String(process.pid),
    ...(opts.vector === false ? ["--no-vector"] : []),
    ...(opts.load ? ["--load", opts.load] : []),
    ...(opts.dumpTo ? ["--dump-to", opts.dumpTo] : []),
  ];
  const proc: Subprocess<"ignore", "pipe", "inherit"> = spawn(args, { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  // Startup takes ~1 s on an idle machine, far longer on a loaded one.
  const timer = setTimeout(() => proc.kill("SIGKILL"), 120_000);
  while (!out.includes("\n")) {
    const next = await reader.read();
    if (next.done) {
      clearTimeout(timer);
      throw new Error(`pglite-server exited (${await proc.exited}) before printing its URL (killed after 120 s if it hung)`);
    }
    out += dec.decode(next.value);
  }
  clearTimeout(timer);
  // Nothing more comes on stdout; the pipe must not keep this process alive.
  await reader.cancel();
  const { url } = JSON.parse(out.slice(0, out.indexOf("\n"))) as { url: string };
  const stop = () => {
    try {
      proc.kill();
    } catch {
      /* gone already */
    }
  };
  const dump = async () => {
    const file = opts.dumpTo;
    if (!file) throw new Error("startPglite: dump() needs the dumpTo option");
    for (const f of [file, `${file}.err`]) rmSync(f, { force: true });
    proc.kill("SIGUSR2");
    // The child renames the finished tar into place (or writes .err): poll for either.
    while (!existsSync(file)) {
      if (existsSync(`${file}.err`)) throw new Error(`pglite dump failed: ${readFileSync(`${file}.err`, "utf8")}`);
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error("pglite-server exited during a dump");
      await Bun.sleep(200);
    }
  };
  process.once("exit", stop);
  proc.unref();
  return { url, pid: proc.pid, dump, stop };
}

let shared: Promise<PgliteProcess> | null = null;

/** The URL of this test process's one PGlite database (with pgvector), started on first use. */
export async function pgliteUrl(): Promise<string> {
  shared ??= startPglite();
  return (await shared).url;
}
