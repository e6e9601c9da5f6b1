import { createReadStream, createWriteStream, existsSync, fchmodSync, openSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { invalid } from "../../errors";
import { createPrivateFile, PRIVATE_FILE_MODE } from "../../private-files";
import { VERSION } from "../../version";
import { parseAnchors } from "./anchors";
import { folderSections, isValidName, sectionStore } from "../identity";
import { normalizeMemoryType } from "./types";
import { eventRecord, type MemoryColumns } from "./store-bulk";
import { redact } from "../secrets";
import type { Services } from "../services";
import type { Storage } from "../storage";
import type { AnchorRecord, EventRecord, FullMemory, HistoryRecord, LinkRecord, SegmentRecord } from "./store-bulk";
import { counted } from "../text";
import { DISTILL_EVIDENCE_MAX_CHARS } from "../distill/tuning";

/**
 * The JSONL portability format: one record per line, `kind` first. Every
 * column of memories, links, tags, segments, adoption events and earlier
 * versions (`history`, added in 0.17; older exports simply have none) and
 * anchors to code (`anchor`, added in 0.17; likewise optional; with the
 * re-check's evidence excerpt, state and confirmation) is carried
 * as is, so an import reproduces the database (ids, dates, strength,
 * counters); vectors travel optionally and are reused only when they came
 * from the same embedder.
 */
export const FORMAT = "memsvc-export/1";

interface MemoryRecord extends MemoryColumns {
  kind: "memory";
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

/** Writes everything to `file` from one consistent snapshot (safe while a server runs). */
export async function exportAll(storage: Storage, identityRoot: string, file: string, opts: { vectors: boolean }): Promise<ExportSummary> {
  // An existing file keeps its old mode through a truncating open: set it on the descriptor.
  const fd = openSync(file, "w", PRIVATE_FILE_MODE);
  fchmodSync(fd, PRIVATE_FILE_MODE);
  const out = createWriteStream("", { fd });
  const write = (record: unknown) =>
    new Promise<void>((resolve, reject) => {
      if (out.write(`${JSON.stringify(record)}\n`)) return resolve();
      // Both listeners go once either fires: a long export waits for drain thousands of times.
      const onDrain = () => (out.off("error", onError), resolve());
      const onError = (e: Error) => (out.off("drain", onDrain), reject(e));
      out.once("drain", onDrain).once("error", onError);
    });
  let memories = 0;
  let links = 0;
  let sections = 0;
  const { embedderId } = await storage.memories.embedderState();
  await write({ kind: "meta", format: FORMAT, version: VERSION, embedder: embedderId, exported_at: new Date().toISOString(), vectors: opts.vectors });
  await storage.memories.exportRows(opts, async (row) => {
    if (row.kind === "memory") {
      const { vector, seq: _seq, ...columns } = row.memory;
      const record: MemoryRecord = { kind: "memory", ...columns };
      if (opts.vectors && vector) record.vector = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");
      memories++;
      return write(record);
    }
    if (row.kind === "link") {
      links++;
      return write({ kind: "link", ...row.link });
    }
    if (row.kind === "segment") return write({ kind: "segment", ...row.segment });
    if (row.kind === "event") return write({ kind: "event", ...row.event });
    if (row.kind === "history") return write({ kind: "history", ...row.history });
    if (row.kind === "identity") {
      // PostgreSQL: the sections are rows, read in the same snapshot.
      sections++;
      return write({ kind: "identity", ...row.identity });
    }
    return write({ kind: "anchor", ...row.anchor });
  });
  // SQLite: the sections are the home's files, read after the snapshot.
  if (!storage.identity.sections) {
    const identity = folderSections(identityRoot, () => {});
    for (const agent of [null, ...(await identity.agentScopes())]) {
      for (const [name, f] of await identity.readScope(agent)) {
        await write({ kind: "identity", agent, name, body: f.body });
        sections++;
      }
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
  const existing = await s.storage.memories.countMemories();
  if (existing > 0)
    throw invalid(
      `the database at ${s.storage.location} already holds ${counted(existing, "memory", "memories")}; import into a fresh home (set MEMSVC_HOME to an empty folder)`,
    );
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
  // Evidence excerpts are session text: a hand-edited or old export is redacted like memories.
  for (const r of rest) if (r.kind === "anchor" && typeof r.evidence === "string") r.evidence = await redact(r.evidence);
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
    const out = await s.embedder.embed(
      batch.map((i) => memories[i].content),
      "document",
    );
    batch.forEach((i, j) => {
      vectors[i] = out[j];
    });
    progress(`embedding: ${Math.min(start + 64, toEmbed.length)}/${toEmbed.length}`);
  }
  // A version or anchor of a memory not in the export (hand-edited file) has nothing to belong to.
  const ids = new Set(memories.map((m) => m.id));
  for (const r of rest) {
    if ((r.kind === "history" || r.kind === "anchor") && !ids.has(r.memory_id))
      throw invalid(`${r.kind} record for memory ${r.memory_id}, which the export does not contain`);
  }
  const of = <T>(kind: string, map: (r: Record<string, any>) => T) => rest.filter((r) => r.kind === kind).map(map);
  const { seqs, links } = await s.storage.memories.importRows(
    {
      memories: memories.map((m, i): FullMemory => {
        const { kind: _kind, vector: _vector, ...columns } = m;
        return { ...columns, tags: m.tags, vector: vectors[i] };
      }),
      links: of<LinkRecord>("link", (r) => ({ from_id: r.from_id, to_id: r.to_id, relationship: r.relationship, weight: r.weight, created_at: r.created_at })),
      segments: of<SegmentRecord>("segment", (r) => ({ key: r.key, session_id: r.session_id, memory_count: r.memory_count, created_at: r.created_at })),
      events: of<EventRecord>("event", (r) => eventRecord({ memory_id: r.memory_id, event: r.event, at: r.at, detail: r.detail })),
      history: of<HistoryRecord>("history", (r) => ({
        memory_id: r.memory_id,
        version: r.version,
        content: r.content,
        memory_type: r.memory_type,
        project: r.project ?? null,
        reason: r.reason,
        source_id: r.source_id ?? null,
        replaced_at: r.replaced_at,
      })),
      anchors: of<AnchorRecord>("anchor", (r) => ({
        memory_id: r.memory_id,
        repo: r.repo,
        branch: r.branch ?? null,
        commit_id: r.commit_id,
        paths: r.paths,
        anchored_at: r.anchored_at,
        stale: r.stale ?? null,
        stale_at: r.stale_at ?? null,
        evidence: r.evidence ?? null,
        rechecked: r.rechecked ?? null,
        confirmed_at: r.confirmed_at ?? null,
      })),
    },
    s.embedder.id,
  );
  memories.forEach((m, i) => {
    s.index.upsert(seqs[i], vectors[i], m.project);
  });
  const identity = sectionStore(s, () => {});
  const byScope = new Map<string, [string, string][]>();
  for (const r of rest) {
    if (r.kind !== "identity") continue;
    if (!isValidName(r.name) || (r.agent !== null && !isValidName(r.agent)) || typeof r.body !== "string")
      throw invalid(`identity record with an invalid name, agent or body: ${JSON.stringify(r.name)}`);
    const key = r.agent ?? "";
    byScope.set(key, [...(byScope.get(key) ?? []), [r.name, r.body]]);
  }
  let sections = 0;
  for (const [agent, list] of byScope) {
    await identity.writeSections(agent || null, list, s.now());
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
  need(rec.created_by == null || (typeof rec.created_by === "string" && rec.created_by.length <= 64), "created_by");
  return {
    ...rec,
    memory_type: normalizeMemoryType(rec.memory_type),
    privacy: rec.privacy ?? "WORK",
    source_agent: rec.source_agent ?? "unknown",
  } as MemoryRecord;
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
  need(["update", "restore", "distill", "nightly-merge", "recheck"].includes(rec.reason), "reason");
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
  need(
    rec.evidence === null || rec.evidence === undefined || (typeof rec.evidence === "string" && rec.evidence.length <= DISTILL_EVIDENCE_MAX_CHARS * 2),
    "evidence",
  );
  need(rec.rechecked === null || rec.rechecked === undefined || typeof rec.rechecked === "string", "rechecked");
  need(rec.confirmed_at === null || rec.confirmed_at === undefined || typeof rec.confirmed_at === "number", "confirmed_at");
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

/**
 * A consistent online copy, safe while servers write. On SQLite a copy of the
 * database file (VACUUM INTO); PostgreSQL has no file to copy, so its backup is
 * a logical export (JSONL with vectors and identity files; `memsvc import`
 * restores it). Physical PostgreSQL backups are pg_dump's job.
 */
export async function backupTo(storage: Storage, identityRoot: string, file: string): Promise<{ file: string; bytes: number; kind: "database" | "export" }> {
  if (existsSync(file)) throw invalid(`${file} exists; choose a new file name`);
  // VACUUM INTO accepts an empty file and keeps its mode; its own new file would follow the umask.
  createPrivateFile(file);
  try {
    if (await storage.memories.copyTo(file)) return { file, bytes: Bun.file(file).size, kind: "database" };
    await exportAll(storage, identityRoot, file, { vectors: true });
    return { file, bytes: Bun.file(file).size, kind: "export" };
  } catch (e) {
    rmSync(file, { force: true });
    throw e;
  }
}

/** The default backup file: a database copy on SQLite, a JSONL export on PostgreSQL. */
export const defaultBackupName = (home: string, engine: Storage["engine"] = "sqlite") =>
  join(home, "backups", `memsvc-${new Date().toISOString().replace(/[:.]/g, "-")}.${engine === "sqlite" ? "db" : "jsonl"}`);
