import type { HarnessCliProvider } from "../config";
import type { CliRun } from "./cli-process";

/** How one harness CLI is run headless and how its answer is read. */
export interface CliSpec {
  provider: HarnessCliProvider;
  /** The program's name on PATH. */
  bin: string;
  /** The harness, as its users know it. */
  name: string;
  /** For /health: what runs and who pays. */
  mode: string;
  /** What to do when it is not logged in. */
  loginHint: string;
  /** Flags only: the prompt goes on stdin. `workDir` is the call's private temp folder (its cwd). */
  args(model: string | null, workDir: string): string[];
  /** The failure the CLI itself reported in its JSON output, if any (its own words, not the prompt). */
  reportedError(run: CliRun): string | null;
  /** The model's reply text from a run that exited 0; throws CliFailure when there is none. */
  reply(run: CliRun, workDir: string): string;
  /** Removes what the CLI kept of this call outside `workDir` (after every run, whatever its outcome). */
  cleanup?(workDir: string): void;
}

/** A run that finished but gave no usable answer; the message completes "<CLI> ...". */
export class CliFailure extends Error {}

/** The one JSON object a CLI printed (the last line that is one, when it printed more). */
export function parseEnvelope(text: string): Record<string, unknown> | null {
  const whole = tryObject(text.trim());
  if (whole) return whole;
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const v = tryObject(lines[i].trim());
    if (v) return v;
  }
  return null;
}

function tryObject(text: string): Record<string, unknown> | null {
  if (!text.startsWith("{")) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
