import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig } from "../config";
import { stderrLogger } from "../core/log";
import {
  IMPORT_KINDS,
  importPrepared,
  prepareStream,
  readSource,
  storedHashes,
  type ImportKind,
  type ImportOutcome,
  type ReadResult,
  type SourceProblem,
} from "../core/import";
import { FallbackEmbedder } from "../embed";
import { counted } from "../core/text";
import { AppError } from "../errors";
import { UsageError } from "./args";
import { progressLine } from "./progress";
import { preparedInWorker } from "./import-source";
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

/** Sources that are folders of files: read as a stream, in a worker thread. The others are one file, read whole first. */
const FOLDER_KINDS: ReadonlySet<ImportKind> = new Set(["markdown", "agents-md", "claude-code"]);

/**
 * `memsvc import --from <kind> [<path>] [--dry-run]`: reads the source, prints
 * one line per refused file, then imports (or, dry, shows counts and a
 * sample). Exit 1 when every source was refused. A folder streams through a
 * worker thread (import-source.ts) while this thread writes.
 */
export async function runImportFrom(kind: ImportKind, rawPath: string | undefined, dryRun: boolean): Promise<number> {
  const path = rawPath ?? DEFAULT_PATH[kind]?.();
  if (!path) throw new UsageError(`give the ${kind} source: memsvc import --from ${kind} <path>`);
  const config = loadConfig();
  const now = Date.now();
  const log = stderrLogger("warn");
  let whole: ReadResult | null = null;
  if (!FOLDER_KINDS.has(kind)) {
    // One file: read before the home is opened, so a refused one creates nothing.
    whole = await readSource(kind, resolve(path), { now });
    if (whole.sources === 0) return nothingRead(whole.problems, path);
  }
  const chunks = (existing: ReadonlyMap<bigint, number>, embed: boolean) =>
    whole
      ? prepareStream(
          (async function* () {
            yield whole;
          })(),
          existing,
        )
      : preparedInWorker({ kind, path: resolve(path), now, existing, embed }, log);
  if (dryRun && config.storage === "sqlite" && !existsSync(config.paths.db)) {
    // A dry run into a home not created yet: nothing there to repeat; create nothing.
    const out = await importPrepared(null, chunks(new Map(), false));
    if (out.sources === 0) return nothingRead(out.problems, path);
    report(out, config.home);
    return 0;
  }
  const s = await openServices(config, log);
  const bar = progressLine();
  try {
    await s.indexState.ready;
    const existing = await storedHashes((after, limit) => s.storage.memories.reembedRows(after, limit));
    // The offline hashing embedder is plain computation: the reading thread embeds too.
    const out = await importPrepared(s, chunks(existing, s.embedder.id === new FallbackEmbedder().id), {
      dryRun,
      progress: (done, total, label) => total > 0 && bar.update(done, total, label),
    });
    if (out.sources === 0) return nothingRead(out.problems, path);
    if (!dryRun && out.candidates > 0) bar.done(`${out.added + out.merged} of ${out.read} items written`);
    report(out, config.home);
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

function nothingRead(problems: readonly SourceProblem[], path: string): number {
  for (const p of problems) console.error(`memsvc import: ${p.source}: ${p.message}`);
  console.error(`memsvc import: nothing imported from ${path}`);
  return 1;
}

function report(out: ImportOutcome, home: string): void {
  const from = `${counted(out.read, "item")} from ${counted(out.sources, "source")}`;
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
}
