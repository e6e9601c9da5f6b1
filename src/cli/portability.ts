import { dirname, resolve } from "node:path";
import { userInfo } from "node:os";
import { loadConfig } from "../config";
import type { Storage } from "../core/storage";
import { stderrLogger } from "../core/log";
import { backupTo, defaultBackupName, exportAll, importAll } from "../core/memories";
import { AppError } from "../errors";
import { ensurePrivateDir } from "../private-files";
import { parseFlags, UsageError } from "./args";
import { counted } from "../core/text";
import { exportMarkdown } from "../core/import";
import { parseKind, runImportFrom } from "./import-from";
import { openServices, withStorage } from "./open";

export const EXPORT_HELP = `memsvc export [--out <file.jsonl>] [--vectors]
memsvc export --format markdown <folder>

Writes every memory (all fields, tags, earlier versions), link, session segment, adoption event
and identity section to a JSONL file (mode 0600; default ./memsvc-export-<date>.jsonl), never
to stdout; where it wrote and the counts go to stderr.
--vectors also writes the embeddings (reused by an import with the same
embedder). Safe while the server runs.

--format markdown writes one file per memory (YAML front matter: id, type,
project, dates, strength, source, anchors, tags; links as [[wikilinks]])
into a new or empty folder, a subfolder per project: Obsidian opens it as
a vault, and memsvc import --from markdown reads it back.`;

export const IMPORT_HELP = `memsvc import <file.jsonl>
memsvc import --from <kind> [<path>] [--dry-run]

Without --from: loads a memsvc export into the current home, which must
hold no memories yet (point MEMSVC_HOME at a fresh folder). All rows go in
one transaction. Vectors are reused when they came from the active
embedder; otherwise the content is re-embedded.

--from merges another tool's memories into the home (it may hold memories):
  claude-mem   its SQLite database (default ~/.claude-mem/claude-mem.db)
  claude-code  a home folder (default ~), its .claude folder, or a project:
               CLAUDE.md files, rules and the automatic memory notes
  agents-md    AGENTS.md, GEMINI.md and CLAUDE.md files under a folder
  mem0         a mem0 export (the JSON of get_all)
  markdown     a folder of notes (Obsidian, Basic Memory, export --format markdown)
  memsvc       a memsvc JSONL export, merged instead of restored
Documents are split into memory-sized items; exact repeats are skipped and
near-duplicates merged, so a re-run adds nothing. A file that cannot be
read is named on one line and none of it is imported.
--dry-run shows the counts and a sample and writes nothing.`;

export const BACKUP_HELP = `memsvc backup [--out <file>]

Takes a consistent online copy, safe while servers run. SQLite: a copy of
the database file (VACUUM INTO), default <home>/backups/memsvc-<timestamp>.db.
PostgreSQL (storage "postgres"): a logical export (JSONL with vectors and
identity sections, restored with memsvc import), default
<home>/backups/memsvc-<timestamp>.jsonl; for physical backups use pg_dump.`;

/** The configured store, for commands that need no embedder (export, backup). */
export async function runExport(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { out: { type: "string", short: "o" }, vectors: { type: "boolean" }, format: { type: "string" } }, true);
  if (values.help) return help(EXPORT_HELP);
  const config = loadConfig();
  if (values.format !== undefined && values.format !== "jsonl") {
    if (values.format !== "markdown") throw new UsageError(`--format must be jsonl or markdown, got "${values.format}"`);
    const target = positionals[0] ?? values.out;
    if (!target || positionals.length > 1) throw new UsageError("give one folder: memsvc export --format markdown <folder>");
    return withStorage("export", config, async (storage) => {
      const r = await exportMarkdown(storage, resolve(target));
      await cliAudit(storage, "memory.exported", r.folder, { format: "markdown", memories: r.memories });
      console.log(
        `exported ${counted(r.memories, "memory", "memories")} (${counted(r.projects, "project folder")}, ${counted(r.links, "link")}) as Markdown to ${r.folder}`,
      );
    });
  }
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}: the JSONL file is given with --out`);
  const file = resolve(values.out ?? `memsvc-export-${new Date().toISOString().slice(0, 10)}.jsonl`);
  return withStorage("export", config, async (storage) => {
    const r = await exportAll(storage, config.paths.identity, file, { vectors: values.vectors === true });
    await cliAudit(storage, "memory.exported", r.file, { format: "jsonl", memories: r.memories });
    // stderr: the data is in the file, never on stdout, and `memsvc export > x` must not pass this line off as an export.
    console.error(
      `exported ${counted(r.memories, "memory", "memories")}, ${counted(r.links, "link")}, ${counted(r.identity_sections, "identity section")}${r.vectors ? " with vectors" : ""} to ${r.file}`,
    );
  });
}

export async function runImport(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { from: { type: "string" }, "dry-run": { type: "boolean" } }, true);
  if (values.help) return help(IMPORT_HELP);
  if (values.from !== undefined) {
    if (positionals.length > 1) throw new UsageError("give at most one path to import from");
    return runImportFrom(parseKind(values.from), positionals[0], values["dry-run"] === true);
  }
  if (values["dry-run"]) throw new UsageError("--dry-run goes with --from <kind>");
  if (positionals.length !== 1) throw new UsageError("give exactly one export file");
  const config = loadConfig();
  const log = stderrLogger();
  const s = await openServices(config, log);
  try {
    const r = await importAll(s, resolve(positionals[0]), (line) => process.stderr.write(`\r${line}`));
    await cliAudit(s.storage, "memory.imported", resolve(positionals[0]), { memories: r.memories });
    console.log(
      `imported ${counted(r.memories, "memory", "memories")} (${counted(r.reused_vectors, "vector")} reused, ${r.reembedded} re-embedded), ${counted(r.links, "link")}, ${counted(r.identity_sections, "identity section")} into ${config.home}`,
    );
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

export async function runBackup(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { out: { type: "string", short: "o" } });
  if (values.help) return help(BACKUP_HELP);
  const config = loadConfig();
  const file = resolve(values.out ?? defaultBackupName(config.home, config.storage));
  return withStorage("backup", config, async (storage) => {
    ensurePrivateDir(dirname(file));
    const r = await backupTo(storage, config.paths.identity, file);
    await cliAudit(storage, "memory.exported", r.file, { format: "backup" });
    console.log(`backup written: ${r.file} (${Math.round(r.bytes / 1024)} KB${r.kind === "export" ? ", a logical export: restore with memsvc import" : ""})`);
  });
}

function help(text: string): number {
  console.log(text);
  return 0;
}

/** Export, import and backup run on the database itself (whoever can read config.json is its owner): logged as the OS user. */
async function cliAudit(storage: Storage, action: string, target: string, detail: Record<string, unknown>): Promise<void> {
  let user = "unknown";
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry (containers) */
  }
  await storage.audit.append([{ at: Date.now(), actor: `cli:${user}`, action, target, detail: JSON.stringify(detail), peer: "cli" }]);
}
