import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";

// The single truth of the ordinary tables. The FTS5 and vec0 virtual tables
// cannot be described here; they live in migrations/0001_init.sql.

export const memories = sqliteTable("memories", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull().unique(),
  content: text("content").notNull(),
  memoryType: text("memory_type").notNull(),
  project: text("project"),
  sourceAgent: text("source_agent").notNull().default("unknown"),
  sourceAgentId: text("source_agent_id"),
  sourceDomain: text("source_domain"),
  sourceSession: text("source_session"),
  privacy: text("privacy").notNull().default("WORK"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  refreshedAt: integer("refreshed_at").notNull(),
  strength: real("strength").notNull().default(1),
  shownCount: integer("shown_count").notNull().default(0),
  usedCount: integer("used_count").notNull().default(0),
  lastShownAt: integer("last_shown_at"),
  lastUsedAt: integer("last_used_at"),
  linkCount: integer("link_count").notNull().default(0),
  /** The member whose token created it (migration 0017); null before tokens or when the server wrote it. */
  createdBy: text("created_by"),
});

export const links = sqliteTable(
  "links",
  {
    fromId: text("from_id").notNull(),
    toId: text("to_id").notNull(),
    relationship: text("relationship").notNull(),
    weight: real("weight").notNull().default(1),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.fromId, t.toId, t.relationship] })],
);

export const memoryTags = sqliteTable(
  "memory_tags",
  {
    memoryId: text("memory_id").notNull(),
    tag: text("tag").notNull(),
    weight: real("weight").notNull().default(1),
  },
  (t) => [primaryKey({ columns: [t.memoryId, t.tag] })],
);

export const segments = sqliteTable("segments", {
  key: text("key").primaryKey(),
  sessionId: text("session_id").notNull(),
  memoryCount: integer("memory_count").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const memoryEvents = sqliteTable("memory_events", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  memoryId: text("memory_id").notNull(),
  kind: text("kind").notNull(),
  at: integer("at").notNull(),
  /** Feedback events: their JSON (migration 0016); null for shown and used. */
  detail: text("detail"),
});

export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

export const recallSessions = sqliteTable("recall_sessions", {
  sessionId: text("session_id").primaryKey(),
  turn: integer("turn").notNull().default(0),
  updatedAt: integer("updated_at").notNull(),
});

/** The running topic of a recall session (JSON), deleted with the session (migration 7). */
export const recallTopics = sqliteTable("recall_topics", {
  sessionId: text("session_id").primaryKey(),
  topic: text("topic").notNull(),
});

/** Similarity calibration per embedder id (migration 7); see src/core/search/calibration.ts. */
export const embedderCalibration = sqliteTable("embedder_calibration", {
  embedderId: text("embedder_id").primaryKey(),
  memories: integer("memories").notNull(),
  computedAt: integer("computed_at").notNull(),
  stats: text("stats").notNull(),
});

export const recallShown = sqliteTable(
  "recall_shown",
  {
    sessionId: text("session_id").notNull(),
    memoryId: text("memory_id").notNull(),
    turn: integer("turn").notNull(),
    /** The turn whose showing a detected use counted for (migration 0018); null: none yet. */
    usedTurn: integer("used_turn"),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.memoryId] })],
);

export const nightlyRuns = sqliteTable("nightly_runs", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  day: text("day").notNull(),
  status: text("status").notNull(),
  forced: integer("forced").notNull().default(0),
  owner: text("owner").notNull(),
  startedAt: integer("started_at").notNull(),
  heartbeatAt: integer("heartbeat_at").notNull(),
  finishedAt: integer("finished_at"),
  cursor: text("cursor").notNull().default("{}"),
  digest: text("digest").notNull().default("{}"),
});

/** Primary domain per tagged memory, kept by triggers on memory_tags (migrations/0003_analytics.sql). */
export const memoryPrimaryDomain = sqliteTable("memory_primary_domain", {
  memoryId: text("memory_id").primaryKey(),
  domain: text("domain").notNull(),
});

/** Substance-gate rejects waiting for the nightly log (migrations/0005_dropped.sql). */
export const distillDropped = sqliteTable("distill_dropped", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  at: integer("at").notNull(),
  reason: text("reason").notNull(),
  content: text("content").notNull(),
});

/** Earlier versions of a memory's content, type and project (migrations/0006_history.sql). */
export const memoryHistory = sqliteTable(
  "memory_history",
  {
    memoryId: text("memory_id").notNull(),
    version: integer("version").notNull(),
    content: text("content").notNull(),
    memoryType: text("memory_type").notNull(),
    project: text("project"),
    reason: text("reason").notNull(),
    sourceId: text("source_id"),
    replacedAt: integer("replaced_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.memoryId, t.version] })],
);

/** What recall and agent searches gave the agent (migrations/0016_receipts.sql says what each column holds). */
export const recallReceipts = sqliteTable(
  "recall_receipts",
  {
    id: text("id").primaryKey(),
    at: integer("at").notNull(),
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

/** Members' tokens, only their SHA-256 (migrations/0017_tokens.sql); a name is unique among live tokens. */
export const tokens = sqliteTable(
  "tokens",
  {
    id: integer("id").primaryKey(),
    name: text("name").notNull(),
    hash: text("hash").notNull().unique(),
    role: text("role").notNull(),
    /** JSON array of project names; null: every project. */
    projects: text("projects"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("tokens_live_name").on(t.name).where(sql`revoked_at IS NULL`)],
);

/** Who did what, when, from where (migrations/0017_tokens.sql); bounded by core/audit's retention. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    detail: text("detail"),
    peer: text("peer"),
  },
  (t) => [index("audit_log_at").on(t.at)],
);
