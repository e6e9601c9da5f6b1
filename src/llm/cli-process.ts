import { spawn, type ChildProcess } from "node:child_process";

/**
 * Runs one harness CLI to completion: the prompt on stdin (never argv: argv
 * is visible in `ps` and limited in size), stdout and stderr bounded, and the
 * whole process tree killed on timeout, abort or oversized output. Resolves
 * once the CLI has exited; never rejects.
 */

export interface CliRunOptions {
  stdin: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** More stdout than this is no answer: the run is killed and reported as overflow. */
  maxStdoutBytes: number;
  /** Only the tail is kept: the end of stderr says why a CLI failed. */
  maxStderrBytes: number;
}

export interface CliRun {
  /** Set when the program could not be started at all (ENOENT, EACCES, ...). */
  spawnError: NodeJS.ErrnoException | null;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  overflow: boolean;
  pid: number | null;
}

/** After TERM, the tree gets this long before KILL. */
const KILL_GRACE_MS = 1_000;
/** After the CLI exits, leftovers it started (holding stdout open) get this long before they are killed. */
const EXIT_DRAIN_MS = 500;

export function runCli(command: string, args: readonly string[], opts: CliRunOptions): Promise<CliRun> {
  return new Promise((resolve) => {
    const run: CliRun = { spawnError: null, code: null, signal: null, stdout: "", stderr: "", timedOut: false, aborted: false, overflow: false, pid: null };
    const win = process.platform === "win32";
    // Windows cannot start a .cmd shim without a shell; the arguments are ours (flags, a model name, paths), quoted.
    const shim = win && /\.(cmd|bat)$/i.test(command);
    let child: ChildProcess;
    try {
      child = spawn(shim ? `"${command}"` : command, shim ? args.map(winQuote) : [...args], {
        cwd: opts.cwd,
        env: opts.env,
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group on POSIX, so the whole tree can be killed at once.
        detached: !win,
        windowsHide: true,
        shell: shim,
      });
    } catch (e) {
      run.spawnError = e as NodeJS.ErrnoException;
      resolve(run);
      return;
    }
    run.pid = child.pid ?? null;
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = Buffer.alloc(0);
    let settled = false;
    let killed = false;
    const timers: ReturnType<typeof setTimeout>[] = [];

    const kill = () => {
      if (killed) return;
      killed = true;
      killTree(child, "SIGTERM");
      timers.push(setTimeout(() => killTree(child, "SIGKILL"), KILL_GRACE_MS));
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      opts.signal?.removeEventListener("abort", onAbort);
      // Whatever the CLI left running in its group goes with it.
      killTree(child, "SIGKILL");
      run.stdout = Buffer.concat(out).toString("utf8");
      run.stderr = err.toString("utf8");
      resolve(run);
    };
    const onAbort = () => {
      run.aborted = true;
      kill();
    };

    child.on("error", (e) => {
      // Start-up failure: no exit event follows.
      if (run.pid === null || (e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "EACCES") {
        run.spawnError = e as NodeJS.ErrnoException;
        finish();
      }
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > opts.maxStdoutBytes) {
        run.overflow = true;
        kill();
        return;
      }
      out.push(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      err = Buffer.concat([err, chunk]);
      if (err.length > opts.maxStderrBytes) err = err.subarray(err.length - opts.maxStderrBytes);
    });
    child.on("exit", (code, signal) => {
      run.code = code;
      run.signal = signal;
      timers.push(setTimeout(finish, EXIT_DRAIN_MS));
    });
    child.on("close", finish);

    timers.push(
      setTimeout(() => {
        run.timedOut = true;
        kill();
      }, opts.timeoutMs),
    );
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener("abort", onAbort, { once: true });

    // A CLI that exits without reading its input closes the pipe: not an error of ours.
    child.stdin!.on("error", () => {});
    child.stdin!.end(opts.stdin);
  });
}

function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (process.platform === "win32") {
    if (child.exitCode === null) spawn("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore", windowsHide: true }).on("error", () => {});
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone already */
  }
}

function winQuote(arg: string): string {
  return `"${arg.replace(/"/g, '""')}"`;
}
