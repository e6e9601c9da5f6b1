/** How long one service-manager command may take (systemctl talks to a bus that can hang in odd containers). */
const COMMAND_TIMEOUT_MS = 15_000;

export interface CommandResult {
  code: number;
  output: string;
}

/** Runs a manager command found on env's PATH; a missing program or a hang is a failure with a reason, never a throw. */
export function runManager(argv: string[], env: NodeJS.ProcessEnv): CommandResult {
  const [name, ...args] = argv;
  const path = env.PATH ?? env.Path ?? "";
  const program = name ? Bun.which(name, { PATH: path }) : null;
  if (!program) return { code: 127, output: `${name} not found on PATH` };
  try {
    const r = Bun.spawnSync([program, ...args], {
      env: env as Record<string, string>,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: COMMAND_TIMEOUT_MS,
    });
    const output = `${r.stdout.toString()}${r.stderr.toString()}`.trim();
    if (r.exitCode === null) return { code: 124, output: `${name} did not finish within ${COMMAND_TIMEOUT_MS / 1000} s` };
    return { code: r.exitCode, output };
  } catch (e) {
    return { code: 126, output: `${name} could not run: ${(e as Error).message}` };
  }
}

/** The last line of a command's output, for one-line messages. */
export function lastLine(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.at(-1) ?? "(no output)";
}
