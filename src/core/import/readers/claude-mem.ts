import { counted } from "../../text";
import { Database } from "bun:sqlite";
import { resolve } from "node:path";
import type { ImportItem, ReaderOptions, ReadResult } from "../types";
import { checkPath } from "./files";
import { typeFromWord } from "./note";

/**
 * claude-mem's SQLite database (~/.claude-mem/claude-mem.db), opened read-only.
 * Checked against its schema.sql (migrations through 35) and the older
 * layout whose session column was `sdk_session_id`: observations (title,
 * subtitle, narrative or text, facts and concepts as JSON arrays, type,
 * project, created_at_epoch) and session_summaries (request, investigated,
 * learned, completed, next_steps). A project merged in claude-mem
 * (merged_into_project) is imported under the project it was merged into.
 * Each observation links to its session's summary ("part_of").
 */
export async function readClaudeMem(path: string, opts: ReaderOptions): Promise<ReadResult> {
  const file = resolve(path);
  const fail = (message: string): ReadResult => ({ items: [], problems: [{ source: file, message }], sources: 0 });
  const bad = checkPath(file, "file");
  if (bad) return fail(bad);
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
    db.query("SELECT count(*) FROM sqlite_master").get();
  } catch (e) {
    return fail(`not an SQLite database (${(e as Error).message.split("\n")[0]})`);
  }
  try {
    const tables = new Set(
      db
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => r.name),
    );
    if (!tables.has("observations")) return fail("not a claude-mem database: it has no observations table");
    const cols = (t: string) =>
      new Set(
        db
          .query<{ name: string }, []>(`PRAGMA table_info(${t})`)
          .all()
          .map((r) => r.name),
      );
    const obsCols = cols("observations");
    const session = obsCols.has("memory_session_id") ? "memory_session_id" : obsCols.has("sdk_session_id") ? "sdk_session_id" : null;
    const missing = ["id", "project", "type"].filter((c) => !obsCols.has(c));
    if (!session) missing.push("memory_session_id");
    if (!obsCols.has("created_at_epoch") && !obsCols.has("created_at")) missing.push("created_at_epoch");
    if (!["title", "narrative", "text"].some((c) => obsCols.has(c))) missing.push("title/narrative/text");
    if (missing.length) return fail(`observations lacks ${missing.join(", ")}: not a claude-mem layout this version reads`);
    const pick = (set: Set<string>, c: string) => (set.has(c) ? c : `NULL AS ${c}`);
    const items: ImportItem[] = [];
    let skipped = 0;
    const rows = db
      .query<Record<string, unknown>, []>(
        `SELECT id, ${session} AS session, project, type, ${["title", "subtitle", "narrative", "text", "facts", "concepts", "created_at", "created_at_epoch", "merged_into_project"].map((c) => pick(obsCols, c)).join(", ")} FROM observations ORDER BY id`,
      )
      .all();
    for (const r of rows) {
      const body = str(r.narrative) ?? str(r.text);
      const head = [str(r.title), str(r.subtitle)].filter(Boolean).join(" — ");
      const facts = jsonList(r.facts);
      const content = [head, body, facts.length ? facts.map((f) => `- ${f}`).join("\n") : null].filter(Boolean).join("\n\n");
      if (!content.trim()) {
        skipped++;
        continue;
      }
      items.push({
        content,
        memoryType: typeFromWord(r.type, "knowledge"),
        project: str(r.merged_into_project) ?? str(r.project),
        createdAt: dateOf(r.created_at_epoch, r.created_at, opts.now),
        sourceAgent: "claude-mem",
        provenance: `${file}#observations/${r.id}`,
        tags: jsonList(r.concepts),
        keys: [`claude-mem:observation:${r.id}`],
        links: r.session ? [{ to: `claude-mem:session:${r.session}`, relationship: "part_of" }] : [],
      });
    }
    if (tables.has("session_summaries")) {
      const sumCols = cols("session_summaries");
      const sumSession = sumCols.has("memory_session_id") ? "memory_session_id" : sumCols.has("sdk_session_id") ? "sdk_session_id" : null;
      if (!sumSession || !sumCols.has("project"))
        return fail("session_summaries lacks its session or project column: not a claude-mem layout this version reads");
      const fields = ["request", "investigated", "learned", "completed", "next_steps", "notes"] as const;
      const labels: Record<(typeof fields)[number], string> = {
        request: "Request",
        investigated: "Investigated",
        learned: "Learned",
        completed: "Completed",
        next_steps: "Next steps",
        notes: "Notes",
      };
      const summaries = db
        .query<Record<string, unknown>, []>(
          `SELECT id, ${sumSession} AS session, project, ${[...fields, "created_at", "created_at_epoch", "merged_into_project"].map((c) => pick(sumCols, c)).join(", ")} FROM session_summaries ORDER BY id`,
        )
        .all();
      for (const r of summaries) {
        const parts = fields.filter((f) => str(r[f])).map((f) => `${labels[f]}: ${str(r[f])}`);
        if (parts.length === 0) {
          skipped++;
          continue;
        }
        items.push({
          content: `Session summary\n\n${parts.join("\n")}`,
          memoryType: "experience",
          project: str(r.merged_into_project) ?? str(r.project),
          createdAt: dateOf(r.created_at_epoch, r.created_at, opts.now),
          sourceAgent: "claude-mem",
          provenance: `${file}#session_summaries/${r.id}`,
          tags: [],
          keys: r.session ? [`claude-mem:session:${r.session}`] : [],
          links: [],
        });
      }
    }
    return {
      items,
      problems: skipped ? [{ source: file, message: `${counted(skipped, "row")} with no text ${skipped === 1 ? "was" : "were"} left out` }] : [],
      sources: 1,
    };
  } catch (e) {
    return fail(`could not be read as a claude-mem database (${(e as Error).message.split("\n")[0]})`);
  } finally {
    db.close();
  }
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim() : null);

/** claude-mem keeps facts and concepts as JSON arrays of strings (older rows: plain text). */
function jsonList(v: unknown): string[] {
  const s = str(v);
  if (!s) return [];
  try {
    const parsed = JSON.parse(s);
    if (Array.isArray(parsed)) return parsed.filter((x): x is string => typeof x === "string" && x.trim() !== "").map((x) => x.trim());
  } catch {
    // Not JSON: one item.
  }
  return [s];
}

function dateOf(epoch: unknown, iso: unknown, now: number): number {
  if (typeof epoch === "number" && epoch > 0) return epoch < 1e11 ? epoch * 1000 : epoch;
  const ms = typeof iso === "string" ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) ? ms : now;
}
