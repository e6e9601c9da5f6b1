/**
 * The redaction of another commit, for a before/after comparison in one
 * process (bench/redaction.ts --against <ref>): that commit's src/ is
 * extracted with `git archive` into the build cache (gitignored; node_modules
 * resolves from the checkout above it) and its secrets module imported
 * beside the working tree's. Both then run on the same inputs, alternately,
 * under the same load.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Redaction } from "../../src/core/secrets/redact";

export type RedactFn = (text: string) => Promise<Redaction>;
export type RedactOwnFn = (text: string) => Redaction;

export async function redactionAt(root: string, ref: string): Promise<{ sha: string; redactSecrets: RedactFn; redactOwn: RedactOwnFn }> {
  const rev = Bun.spawnSync(["git", "-C", root, "rev-parse", "--verify", `${ref}^{commit}`]);
  if (rev.exitCode !== 0) throw new Error(`--against: '${ref}' is not a commit of ${root}: ${rev.stderr.toString().trim()}`);
  const sha = rev.stdout.toString().trim();
  const dir = join(root, ".build-cache", "bench-against", sha);
  if (!existsSync(join(dir, "src/core/secrets/index.ts"))) {
    mkdirSync(dir, { recursive: true });
    const archive = Bun.spawnSync(["sh", "-c", `git -C "${root}" archive "${sha}" src | tar -x -C "${dir}"`]);
    if (archive.exitCode !== 0) throw new Error(`--against: could not extract ${sha}: ${archive.stderr.toString().trim()}`);
  }
  const mod = (await import(join(dir, "src/core/secrets/index.ts"))) as { redactSecrets: RedactFn; redactOwn: RedactOwnFn };
  return { sha, redactSecrets: mod.redactSecrets, redactOwn: mod.redactOwn };
}
