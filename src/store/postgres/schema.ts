import { sql } from "drizzle-orm";
import { bigint, bigserial, customType, doublePrecision, index, integer, pgSchema, primaryKey, text, uniqueIndex, vector } from "drizzle-orm/pg-core";
import { DIMENSIONS } from "../../embed/types";

// The PostgreSQL twin of ../sqlite/schema.ts: the same tables and the same
// (snake_case) column names, so export/import, `memsvc migrate` and the
// tests map 1:1. Times stay integer milliseconds since the epoch (bigint,
// read as JS numbers). migrations/0001_init.sql creates exactly this; the
// triggers (link_count, primary domain) live only there.

/** A weighted full-text vector; drizzle has no built-in type for it. */
const tsvector = customType<{ data: string }>({
  dataType: () => "tsvector",
});

const ms = (name: string) => bigint(name, { mode: "number" });

/** Every table of one store, qualified by its schema (config `database_schema`). */
export function pgTables(schemaName: string) {
  const s = pgSchema(schemaName);

  const memories = s.table(
    "memories",
    {
      // Identity, not serial: `memsvc migrate` and import may carry seq values over;
      // after inserting explicit values, move the identity past them
      // (`SELECT setval(pg_get_serial_sequence('<schema>.memories', 'seq'), max(seq)) FROM <schema>.memories`).
      seq: bigint("seq", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
      id: text("id").notNull().unique(),
      content: text("content").notNull(),
      memoryType: text("memory_type").notNull(),
      project: text("project"),
      sourceAgent: text("source_agent").notNull().default("unknown"),
      sourceAgentId: text("source_agent_id"),
      sourceDomain: text("source_domain"),
      sourceSession: text("source_session"),
      privacy: text("privacy").notNull().default("WORK"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
      refreshedAt: ms("refreshed_at").notNull(),
      strength: doublePrecision("strength").notNull().default(1),
      shownCount: integer("shown_count").notNull().default(0),
      usedCount: integer("used_count").notNull().default(0),
      lastShownAt: ms("last_shown_at"),
      lastUsedAt: ms("last_used_at"),
      linkCount: integer("link_count").notNull().default(0),
      createdBy: text("created_by"),
      // SQLite's FTS5 table indexes content alone (porter stemming): the same
      // here, 'english' stems likewise, weight A so ts_rank can add lower-weighted
      // fields later without reweighting content.
      fts: tsvector("fts").generatedAlwaysAs(sql`setweight(to_tsvector('english', content), 'A')`),
    },
    (t) => [
      index("memories_project").on(t.project),
      index("memories_session").on(t.sourceSession),
      index("memories_created").on(t.createdAt),
      index("memories_type").on(t.memoryType),
      index("memories_project_type").on(t.project, t.memoryType),
      index("memories_type_created").on(t.memoryType, t.createdAt),
      index("memories_never_shown").on(t.shownCount).where(sql`shown_count = 0`),
      index("memories_never_used").on(t.usedCount).where(sql`used_count = 0`),
      index("memories_strength").on(t.strength),
      index("memories_link_count").on(t.linkCount),
      index("memories_project_link_count").on(t.project, t.linkCount),
      index("memories_project_created").on(t.project, t.createdAt),
      index("memories_rank").on(t.project, t.strength, t.refreshedAt, t.linkCount, t.createdAt),
      index("memories_fts").using("gin", t.fts),
    ],
  );

  /**
   * One vector per memory, keyed by its seq like SQLite's memory_vec. A side
   * table, not a column on memories: recall updates shown_count/strength on
   * every prompt, and a non-HOT update of a memories row would insert a new
   * entry into every index of the row, the costly HNSW graph included.
   */
  const memoryVec = s.table(
    "memory_vec",
    {
      seq: bigint("seq", { mode: "number" })
        .primaryKey()
        .references(() => memories.seq, { onDelete: "cascade" }),
      embedding: vector("embedding", { dimensions: DIMENSIONS }).notNull(),
      // The memory's project, kept by the triggers of migration 0010 (set on insert, moved with the memory's).
      project: text("project"),
    },
    (t) => [
      index("memory_vec_hnsw").using("hnsw", t.embedding.op("vector_cosine_ops")),
      // INCLUDE (seq, embedding) in 0009 (drizzle cannot say it): a project's vectors together, for its exact scan.
      index("memory_vec_project").on(t.project),
    ],
  );

  const links = s.table(
    "links",
    {
      fromId: text("from_id")
        .notNull()
        .references(() => memories.id, { onDelete: "cascade" }),
      toId: text("to_id")
        .notNull()
        .references(() => memories.id, { onDelete: "cascade" }),
      relationship: text("relationship").notNull(),
      weight: doublePrecision("weight").notNull().default(1),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.fromId, t.toId, t.relationship] }), index("links_to").on(t.toId)],
  );

  const memoryTags = s.table(
    "memory_tags",
    {
      memoryId: text("memory_id")
        .notNull()
        .references(() => memories.id, { onDelete: "cascade" }),
      tag: text("tag").notNull(),
      weight: doublePrecision("weight").notNull().default(1),
    },
    (t) => [primaryKey({ columns: [t.memoryId, t.tag] }), index("memory_tags_tag").on(t.tag)],
  );

  const segments = s.table(
    "segments",
    {
      key: text("key").primaryKey(),
      sessionId: text("session_id").notNull(),
      memoryCount: integer("memory_count").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [index("segments_session").on(t.sessionId)],
  );

  const memoryEvents = s.table(
    "memory_events",
    {
      id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
      memoryId: text("memory_id").notNull(),
      kind: text("kind").notNull(),
      at: ms("at").notNull(),
      detail: text("detail"),
    },
    (t) => [index("memory_events_at").on(t.at), index("memory_events_kind_at").on(t.kind, t.at)],
  );

  const meta = s.table("meta", {
    key: text("key").primaryKey(),
    value: text("value").notNull(),
  });

  const recallSessions = s.table(
    "recall_sessions",
    {
      sessionId: text("session_id").primaryKey(),
      turn: integer("turn").notNull().default(0),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("recall_sessions_updated").on(t.updatedAt)],
  );

  const recallShown = s.table(
    "recall_shown",
    {
      sessionId: text("session_id")
        .notNull()
        .references(() => recallSessions.sessionId, { onDelete: "cascade" }),
      memoryId: text("memory_id").notNull(),
      turn: integer("turn").notNull(),
      usedTurn: integer("used_turn"),
    },
    (t) => [primaryKey({ columns: [t.sessionId, t.memoryId] })],
  );

  const recallTopics = s.table("recall_topics", {
    sessionId: text("session_id")
      .primaryKey()
      .references(() => recallSessions.sessionId, { onDelete: "cascade" }),
    topic: text("topic").notNull(),
  });

  const embedderCalibration = s.table("embedder_calibration", {
    embedderId: text("embedder_id").primaryKey(),
    memories: integer("memories").notNull(),
    computedAt: ms("computed_at").notNull(),
    stats: text("stats").notNull(),
  });

  const nightlyRuns = s.table(
    "nightly_runs",
    {
      id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
      day: text("day").notNull(),
      status: text("status").notNull(),
      forced: integer("forced").notNull().default(0),
      owner: text("owner").notNull(),
      startedAt: ms("started_at").notNull(),
      heartbeatAt: ms("heartbeat_at").notNull(),
      finishedAt: ms("finished_at"),
      cursor: text("cursor").notNull().default("{}"),
      digest: text("digest").notNull().default("{}"),
    },
    (t) => [index("nightly_runs_day").on(t.day, t.id)],
  );

  const memoryPrimaryDomain = s.table(
    "memory_primary_domain",
    {
      memoryId: text("memory_id").primaryKey(),
      domain: text("domain").notNull(),
    },
    (t) => [index("memory_primary_domain_domain").on(t.domain)],
  );

  const distillDropped = s.table("distill_dropped", {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    at: ms("at").notNull(),
    reason: text("reason").notNull(),
    content: text("content").notNull(),
  });

  const memoryHistory = s.table(
    "memory_history",
    {
      memoryId: text("memory_id")
        .notNull()
        .references(() => memories.id, { onDelete: "cascade" }),
      version: integer("version").notNull(),
      content: text("content").notNull(),
      memoryType: text("memory_type").notNull(),
      project: text("project"),
      reason: text("reason").notNull(),
      sourceId: text("source_id"),
      replacedAt: ms("replaced_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.memoryId, t.version] })],
  );

  const memoryAnchors = s.table(
    "memory_anchors",
    {
      memoryId: text("memory_id")
        .notNull()
        .references(() => memories.id, { onDelete: "cascade" }),
      repo: text("repo").notNull(),
      branch: text("branch"),
      commitId: text("commit_id").notNull(),
      paths: text("paths").notNull(),
      anchoredAt: ms("anchored_at").notNull(),
      stale: text("stale"),
      staleAt: ms("stale_at"),
      evidence: text("evidence"),
      rechecked: text("rechecked"),
      confirmedAt: ms("confirmed_at"),
    },
    (t) => [primaryKey({ columns: [t.memoryId, t.repo] }), index("memory_anchors_repo").on(t.repo)],
  );

  /**
   * Named leases for work that one server of several must do (PostgreSQL
   * only: one SQLite file has one server). See PgHandle.lease.
   */
  const leases = s.table("leases", {
    name: text("name").primaryKey(),
    owner: text("owner").notNull(),
    expiresAt: ms("expires_at").notNull(),
  });

  /** Identity sections (migrations/0002_identity.sql): scope '' is global, else an agent id. */
  const identitySections = s.table(
    "identity_sections",
    {
      scope: text("scope").notNull(),
      name: text("name").notNull(),
      body: text("body").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.scope, t.name] })],
  );

  // Receipts of what recall gave the agent (migration 0006_receipts.sql; the SQLite twin says what each column holds).
  const recallReceipts = s.table(
    "recall_receipts",
    {
      id: text("id").primaryKey(),
      at: bigint("at", { mode: "number" }).notNull(),
      kind: text("kind").notNull(),
      via: text("via").notNull(),
      sessionId: text("session_id"),
      turn: integer("turn"),
      agent: text("agent"),
      project: text("project"),
      prompt: text("prompt"),
      promptHash: text("prompt_hash").notNull(),
      tokens: integer("tokens").notNull(),
      budget: integer("budget"),
      injected: text("injected").notNull(),
      dropped: text("dropped").notNull(),
      used: text("used").notNull().default("[]"),
    },
    (t) => [index("recall_receipts_at").on(t.at, t.id), index("recall_receipts_session").on(t.sessionId, t.at)],
  );

  // Members' tokens and the audit log (migration 0007_tokens.sql; the SQLite twin says what each column holds).
  const tokens = s.table(
    "tokens",
    {
      id: bigserial("id", { mode: "number" }).primaryKey(),
      name: text("name").notNull(),
      hash: text("hash").notNull().unique(),
      role: text("role").notNull(),
      projects: text("projects"),
      createdAt: ms("created_at").notNull(),
      expiresAt: ms("expires_at"),
      lastUsedAt: ms("last_used_at"),
      revokedAt: ms("revoked_at"),
    },
    (t) => [uniqueIndex("tokens_live_name").on(t.name).where(sql`revoked_at IS NULL`)],
  );
  const auditLog = s.table(
    "audit_log",
    {
      id: bigserial("id", { mode: "number" }).primaryKey(),
      at: ms("at").notNull(),
      actor: text("actor").notNull(),
      action: text("action").notNull(),
      target: text("target"),
      detail: text("detail"),
      peer: text("peer"),
    },
    (t) => [index("audit_log_at").on(t.at)],
  );

  return {
    tokens,
    auditLog,
    recallReceipts,
    identitySections,
    memories,
    memoryVec,
    links,
    memoryTags,
    segments,
    memoryEvents,
    meta,
    recallSessions,
    recallShown,
    recallTopics,
    embedderCalibration,
    nightlyRuns,
    memoryPrimaryDomain,
    distillDropped,
    memoryHistory,
    memoryAnchors,
    leases,
  };
}

export type PgTables = ReturnType<typeof pgTables>;
