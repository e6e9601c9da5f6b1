import { createReadStream, createWriteStream, existsSync, fchmodSync, openSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { getMeta, type Store } from "../../store/sqlite";
import { invalid } from "../../errors";
import { createPrivateFile, PRIVATE_FILE_MODE } from "../../private-files";
import { VERSION } from "../../version";
import { anchorRecords, parseAnchors } from "./anchors";
import { agentDir, agentFolders, isValidName, readScope } from "../identity";
import { writeSections } from "../identity";
import { normalizeMemoryType } from "./types";
import { redact } from "../secrets";
import type { Services } from "../services";
import { counted } from "../text";

/**
 * The JSONL portability format: one record per line, `kind` first. Every
 * column of memories, links, tags, segments, adoption events and earlier
 * versions (`history`, added in 0.17; older exports simply have none) and
 * anchors to code (`anchor`, added in 0.17; likewise optional) is carried
 * as is, so an import reproduces the database (ids, dates, strength,
 * counters); vectors travel optionally and are reused only when they came
 * from the same embedder.
 */
export const FORMAT = "memsvc-export/1";

interface MemoryRecord {
  kind: "memory";
  id: string;
  content: string;
  memory_type: string;
  project: string | null;
  source_agent: string;
  source_agent_id: string | null;
  source_domain: string | null;
  source_session: string | null;
  privacy: string;
  created_at: number;
  updated_at: number;
  refreshed_at: number;
  strength: number;
  shown_count: number;
  used_count: number;
  last_shown_at: number | null;
  last_used_at: number | null;
  tags: { tag: string; weight: number }[];
  vector?: string;
}

export interface ExportSummary {
  file: string;
  memories: number;
  links: number;
  identity_sections: number;
  vectors: boolean;
}

/** Writes everything to `file`, read inside one transaction so the copy is consistent while a server runs. */
export async function exportAll(store: Store, identityRoot: string, file: string, opts: { vectors: boolean }): Promise<ExportSummary> {
  // An existing file keeps its old mode through a truncating open: set it on the descriptor.
  const fd = openSync(file, "w", PRIVATE_FILE_MODE);
  fchmodSync(fd, PRIVATE_FILE_MODE);
  const out = createWriteStream("", { fd });
  const write = (record: unknown) => new Promise<void>((resolve, reject) => (out.write(`${JSON.stringify(record)}\n`) ? resolve() : out.once("drain", resolve).once("error", reject)));
  const db = store.sqlite;
  let memories = 0;
  let links = 0;
  let sections = 0;
  db.run("BEGIN");
  try {
    await write({ kind: "meta", format: FORMAT, version: VERSION, embedder: getMeta(store, "embedder_id"), exported_at: new Date().toISOString(), vectors: opts.vectors });
    const tags = db.query<{ tag: string; weight: number }, [string]>("SELECT tag, weight FROM memory_tags WHERE memory_id = ? ORDER BY weight DESC, tag");
    const vec = db.query<{ e: Uint8Array }, [number]>("SELECT embedding e FROM memory_vec WHERE rowid = ?");
    for (const m of db.query<Record<string, any>, []>("SELECT * FROM memories ORDER BY seq").iterate()) {
      const { seq, link_count: _derived, ...columns } = m;
      const record: MemoryRecord = { kind: "memory", ...(columns as Omit<MemoryRecord, "kind" | "tags">), tags: tags.all(m.id) };
      if (opts.vectors) {
        const v = vec.get(seq);
        if (v) record.vector = Buffer.from(v.e).toString("base64");
      }
      await write(record);
      memories++;
    }
    for (const l of db.query<Record<string, unknown>, []>("SELECT from_id, to_id, relationship, weight, created_at FROM links ORDER BY rowid").iterate()) {
      await write({ kind: "link", ...l });
      links++;
    }
    for (const seg of db.query<Record<string, unknown>, []>("SELECT key, session_id, memory_count, created_at FROM segments").iterate()) await write({ kind: "segment", ...seg });
    for (const ev of db.query<Record<string, unknown>, []>("SELECT memory_id, kind AS event, at FROM memory_events ORDER BY id").iterate()) await write({ kind: "event", ...ev });
    for (const h of db.query<Record<string, unknown>, []>("SELECT memory_id, version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history ORDER BY memory_id, version").iterate()) {
      await write({ kind: "history", ...h });
    }
    for (const a of anchorRecords(store)) await write({ kind: "anchor", ...a });
  } finally {
    db.run("COMMIT");
  }
  const warn = () => {};
  for (const [name, f] of readScope(identityRoot, identityRoot, warn)) {
    await write({ kind: "identity", agent: null, name, body: f.body });
    sections++;
  }
  for (const agent of agentFolders(identityRoot, warn)) {
    for (const [name, f] of readScope(identityRoot, agentDir(identityRoot, agent), warn)) {
      await write({ kind: "identity", agent, name, body: f.body });
      sections++;
    }
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return { file, memories, links, identity_sections: sections, vectors: opts.vectors };
}

export interface ImportSummary {
  memories: number;
  links: number;
  identity_sections: number;
  reembedded: number;
  reused_vectors: number;
}

/**
 * Loads an export into an empty database: all rows in one transaction (a bad
 * line anywhere changes nothing), identity files after it. Vectors are reused
 * when the export's embedder is the active one; otherwise content is
 * re-embedded in batches before the transaction opens.
 */
export async function importAll(s: Services, file: string, progress: (line: string) => void = () => {}): Promise<ImportSummary> {
  if (!existsSync(file)) throw invalid(`no such file: ${file}`);
  const existing = s.store.sqlite.query<{ n: number }, []>("SELECT count(*) n FROM memories").get()!.n;
  if (existing > 0) throw invalid(`the database at ${s.store.file} already holds ${counted(existing, "memory", "memories")}; import into a fresh home (set MEMSVC_HOME to an empty folder)`);
  const memories: MemoryRecord[] = [];
  const rest: Record<string, any>[] = [];
  let meta: Record<string, any> | null = null;
  let lineNo = 0;
  const lines = createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity });
  for await (const line of lines) {
    lineNo++;
    if (!line.trim()) continue;
    let rec: Record<string, any>;
    try {
      rec = JSON.parse(line);
    } catch {
      throw invalid(`${file}:${lineNo}: not a JSON line`);
    }
    if (rec.kind === "meta") meta = rec;
    else if (rec.kind === "memory") memories.push(checkMemory(rec, `${file}:${lineNo}`));
    else if (rec.kind === "history") rest.push(checkHistory(rec, `${file}:${lineNo}`));
    else if (rec.kind === "anchor") rest.push(checkAnchor(rec, `${file}:${lineNo}`));
    else if (["link", "segment", "event", "identity"].includes(rec.kind)) rest.push(rec);
    else throw invalid(`${file}:${lineNo}: unknown record kind ${JSON.stringify(rec.kind)}`);
  }
  if (!meta || meta.format !== FORMAT) throw invalid(`${file} is not a ${FORMAT} export (missing or different meta line)`);
  // An export from before redaction existed, or edited by hand, may hold secrets: no stored memory
  // or version may. A redacted memory's exported vector embeds the secret, so it is embedded anew.
  for (const m of memories) {
    const clean = await redact(m.content);
    if (clean !== m.content) {
      m.content = clean;
      delete m.vector;
    }
  }
  for (const r of rest) if (r.kind === "history" && typeof r.content === "string") r.content = await redact(r.content);
  const reuse = meta.embedder === s.embedder.id;
  const vectors: Float32Array[] = new Array(memories.length);
  const toEmbed: number[] = [];
  memories.forEach((m, i) => {
    if (reuse && m.vector) {
      const bytes = Buffer.from(m.vector, "base64");
      if (bytes.byteLength === 384 * 4) vectors[i] = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    }
    if (!vectors[i]) toEmbed.push(i);
  });
  for (let start = 0; start < toEmbed.length; start += 64) {
    const batch = toEmbed.slice(start, start + 64);
    const out = await s.embedder.embed(batch.map((i) => memories[i].content), "document");
    batch.forEach((i, j) => (vectors[i] = out[j]));
    progress(`embedding: ${Math.min(start + 64, toEmbed.length)}/${toEmbed.length}`);
  }
  const db = s.store.sqlite;
  const seqs: number[] = [];
  let links = 0;
  db.transaction(() => {
    const insert = db.prepare(
      `INSERT INTO memories(id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy, created_at, updated_at, refreshed_at, strength, shown_count, used_count, last_shown_at, last_used_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    );
    const insertVec = db.prepare("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
    const insertTag = db.prepare("INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)");
    memories.forEach((m, i) => {
      const { seq } = insert.get(m.id, m.content, m.memory_type, m.project, m.source_agent, m.source_agent_id, m.source_domain, m.source_session, m.privacy, m.created_at, m.updated_at, m.refreshed_at, m.strength, m.shown_count, m.used_count, m.last_shown_at, m.last_used_at) as { seq: number };
      seqs.push(seq);
      insertVec.run(BigInt(seq), vectors[i]);
      for (const t of m.tags) insertTag.run(m.id, t.tag, t.weight);
    });
    const insertLink = db.prepare("INSERT OR IGNORE INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)");
    const insertSeg = db.prepare("INSERT OR IGNORE INTO segments(key, session_id, memory_count, created_at) VALUES (?, ?, ?, ?)");
    const insertEvent = db.prepare("INSERT INTO memory_events(memory_id, kind, at) VALUES (?, ?, ?)");
    const insertHistory = db.prepare(
      "INSERT OR REPLACE INTO memory_history(memory_id, version, content, memory_type, project, reason, source_id, replaced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const insertAnchor = db.prepare(
      "INSERT OR REPLACE INTO memory_anchors(memory_id, repo, branch, commit_id, paths, anchored_at, stale, stale_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const ids = new Set(memories.map((m) => m.id));
    for (const r of rest) {
      if (r.kind === "link") links += insertLink.run(r.from_id, r.to_id, r.relationship, r.weight, r.created_at).changes;
      else if (r.kind === "segment") insertSeg.run(r.key, r.session_id, r.memory_count, r.created_at);
      else if (r.kind === "event") insertEvent.run(r.memory_id, r.event, r.at);
      else if (r.kind === "history") {
        // A version of a memory not in the export (hand-edited file) has nothing to belong to.
        if (!ids.has(r.memory_id)) throw invalid(`history record for memory ${r.memory_id}, which the export does not contain`);
        insertHistory.run(r.memory_id, r.version, r.content, r.memory_type, r.project ?? null, r.reason, r.source_id ?? null, r.replaced_at);
      } else if (r.kind === "anchor") {
        if (!ids.has(r.memory_id)) throw invalid(`anchor record for memory ${r.memory_id}, which the export does not contain`);
        insertAnchor.run(r.memory_id, r.repo, r.branch ?? null, r.commit_id, r.paths, r.anchored_at, r.stale ?? null, r.stale_at ?? null);
      }
    }
  })();
  memories.forEach((m, i) => s.index.upsert(seqs[i], vectors[i], m.project));
  const root = s.config.paths.identity;
  const byScope = new Map<string, [string, string][]>();
  for (const r of rest) {
    if (r.kind !== "identity") continue;
    if (!isValidName(r.name) || (r.agent !== null && !isValidName(r.agent)) || typeof r.body !== "string") throw invalid(`identity record with an invalid name, agent or body: ${JSON.stringify(r.name)}`);
    const key = r.agent ?? "";
    byScope.set(key, [...(byScope.get(key) ?? []), [r.name, r.body]]);
  }
  let sections = 0;
  for (const [agent, list] of byScope) {
    writeSections(root, agent ? agentDir(root, agent) : root, list);
    sections += list.length;
  }
  return { memories: memories.length, links, identity_sections: sections, reembedded: toEmbed.length, reused_vectors: memories.length - toEmbed.length };
}

function checkMemory(rec: Record<string, any>, where: string): MemoryRecord {
  const need = (ok: boolean, field: string) => {
    if (!ok) throw invalid(`${where}: memory field ${field} is missing or of the wrong type`);
  };
  need(typeof rec.id === "string" && /^[0-9a-f-]{36}$/.test(rec.id), "id");
  need(typeof rec.content === "string" && rec.content.length > 0, "content");
  for (const f of ["created_at", "updated_at", "refreshed_at", "strength", "shown_count", "used_count"]) need(typeof rec[f] === "number", f);
  need(Array.isArray(rec.tags), "tags");
  return { ...rec, memory_type: normalizeMemoryType(rec.memory_type), privacy: rec.privacy ?? "WORK", source_agent: rec.source_agent ?? "unknown" } as MemoryRecord;
}

function checkHistory(rec: Record<string, any>, where: string): Record<string, any> {
  const need = (ok: boolean, field: string) => {
    if (!ok) throw invalid(`${where}: history field ${field} is missing or of the wrong type`);
  };
  need(typeof rec.memory_id === "string" && /^[0-9a-f-]{36}$/.test(rec.memory_id), "memory_id");
  need(Number.isInteger(rec.version) && rec.version >= 1, "version");
  need(typeof rec.content === "string", "content");
  need(typeof rec.memory_type === "string", "memory_type");
  need(rec.project === null || rec.project === undefined || typeof rec.project === "string", "project");
  need(["update", "restore", "distill", "nightly-merge"].includes(rec.reason), "reason");
  need(typeof rec.replaced_at === "number", "replaced_at");
  return rec;
}

/** An anchor line is checked as /distill checks anchors: a hand-edited export cannot plant a path that escapes its repository. */
function checkAnchor(rec: Record<string, any>, where: string): Record<string, any> {
  const need = (ok: boolean, field: string) => {
    if (!ok) throw invalid(`${where}: anchor field ${field} is missing or of the wrong type`);
  };
  need(typeof rec.memory_id === "string" && /^[0-9a-f-]{36}$/.test(rec.memory_id), "memory_id");
  need(typeof rec.paths === "string", "paths");
  need(typeof rec.anchored_at === "number", "anchored_at");
  need(rec.stale === null || rec.stale === undefined || typeof rec.stale === "string", "stale");
  need(rec.stale_at === null || rec.stale_at === undefined || typeof rec.stale_at === "number", "stale_at");
  let paths: unknown;
  try {
    paths = JSON.parse(rec.paths);
    if (rec.stale) JSON.parse(rec.stale);
  } catch {
    throw invalid(`${where}: anchor paths or stale is not JSON`);
  }
  try {
    const a = parseAnchors({ repo: rec.repo, branch: rec.branch, commit: rec.commit_id, paths })!;
    return { ...rec, repo: a.repo, branch: a.branch, commit_id: a.commit, paths: JSON.stringify(a.paths) };
  } catch (e) {
    throw invalid(`${where}: ${(e as Error).message}`);
  }
}

/** A consistent online copy of the database (VACUUM INTO works while the server writes). */
export function backupTo(store: Store, file: string): { file: string; bytes: number } {
  if (existsSync(file)) throw invalid(`${file} exists; choose a new file name`);
  // VACUUM INTO accepts an empty file and keeps its mode; its own new file would follow the umask.
  createPrivateFile(file);
  try {
    store.sqlite.run("VACUUM INTO ?", [file]);
  } catch (e) {
    rmSync(file, { force: true });
    throw e;
  }
  return { file, bytes: Bun.file(file).size };
}

export const defaultBackupName = (home: string) => join(home, "backups", `memsvc-${new Date().toISOString().replace(/[:.]/g, "-")}.db`);
