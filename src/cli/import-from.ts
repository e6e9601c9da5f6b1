import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig } from "../config";
import { stderrLogger } from "../core/log";
import { IMPORT_KINDS, importItems, prepareImport, readSource, type ImportKind, type ImportOutcome, type ReadResult } from "../core/import";
import { counted } from "../core/text";
import { AppError } from "../errors";
import { UsageError } from "./args";
import { progressLine } from "./progress";
import { openServices } from "./open";

/** Where each tool keeps its memory by default, for `--from <kind>` without a path. */
const DEFAULT_PATH: Partial<Record<ImportKind, () => string>> = {
  "claude-mem": () => join(process.env.CLAUDE_MEM_DATA_DIR ?? join(homedir(), ".claude-mem"), "claude-mem.db"),
  "claude-code": () => homedir(),
};

export function parseKind(value: string): ImportKind {
  if ((IMPORT_KINDS as readonly string[]).includes(value)) return value as ImportKind;
  throw new UsageError(`--from must be one of ${IMPORT_KINDS.join(", ")}, got "${value}"`);
}

/**
 * `memsvc import --from <kind> [<path>] [--dry-run]`: reads the source, prints
 * one line per refused file, then imports (or, dry, shows counts and a
 * sample). Exit 1 when every source was refused.
 */
export async function runImportFrom(kind: ImportKind, rawPath: string | undefined, dryRun: boolean): Promise<number> {
  const path = rawPath ?? DEFAULT_PATH[kind]?.();
  if (!path) throw new UsageError(`give the ${kind} source: memsvc import --from ${kind} <path>`);
  const config = loadConfig();
  const read = await readSource(kind, resolve(path), { now: Date.now() });
  for (const p of read.problems) console.error(`memsvc import: ${p.source}: ${p.message}`);
  if (read.sources === 0) {
    console.error(`memsvc import: nothing imported from ${path}`);
    return 1;
  }
  const from = `${counted(read.items.length, "item")} from ${counted(read.sources, "source")}`;
  if (dryRun && config.storage === "sqlite" && !existsSync(config.paths.db)) {
    // A dry run into a home not created yet: nothing there to repeat; create nothing.
    report((await prepareImport(async () => [], read.items, true)).outcome, read, from, config.home);
    return 0;
  }
  const log = stderrLogger("warn");
  const s = await openServices(config, log);
  const bar = progressLine();
  try {
    await s.indexState.ready;
    const out = await importItems(s, read.items, {
      dryRun,
      progress: (done, total, label) => total > 0 && bar.update(done, total, `${label} ${done}/${total}`),
    });
    if (!dryRun && out.candidates > 0) bar.done(`${out.added + out.merged} of ${read.items.length} items written`);
    report(out, read, from, config.home);
    return 0;
  } catch (e) {
    if (e instanceof AppError) {
      console.error(`memsvc import: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await s.close();
  }
}

function report(out: ImportOutcome, read: ReadResult, from: string, home: string): void {
  for (const p of out.problems) console.error(`memsvc import: ${p.source}: ${p.message}`);
  if (out.dryRun) {
    console.log(
      `dry run: ${from}; ${out.candidates} new, ${out.skipped} already there (exact repeats); near-duplicates are merged when importing. Nothing was written.`,
    );
    if (out.sample.length) console.log("sample:");
    for (const m of out.sample) {
      const text = m.content.replace(/\s+/g, " ");
      console.log(
        `  [${m.memory_type}] ${m.project ?? "(no project)"} · ${m.source_agent} · ${m.provenance}\n    ${text.length > 140 ? `${text.slice(0, 140)}…` : text}`,
      );
    }
    return;
  }
  const unresolved = out.unresolved ? `, ${counted(out.unresolved, "named link")} to nothing imported or stored (left out)` : "";
  console.log(
    `imported ${from} into ${home}: ${out.added} added, ${out.merged} merged, ${out.skipped} skipped (already there), ${counted(out.links, "link")}${unresolved}`,
  );
  void read;
}
