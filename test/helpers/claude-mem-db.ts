import { Database } from "bun:sqlite";
import { cpSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { slugOf } from "../../src/core/import/readers/claude-code";

/**
 * claude-mem's tables as its src/services/sqlite/schema.sql declares them
 * (migration 35; the columns an import reads, with their types and
 * constraints). Built here with bun:sqlite so no binary .db is committed.
 */
const SCHEMA = `
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL, memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL, platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT, started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active', 'completed', 'failed')), worker_port INTEGER,
  prompt_counter INTEGER DEFAULT 0, custom_title TEXT);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, text TEXT, type TEXT NOT NULL,
  title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, concepts TEXT, files_read TEXT, files_modified TEXT,
  prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, content_hash TEXT, agent_type TEXT, agent_id TEXT,
  merged_into_project TEXT, generated_by_model TEXT, metadata TEXT, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE,
  UNIQUE(memory_session_id, content_hash));
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, request TEXT,
  investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT, files_read TEXT, files_edited TEXT, notes TEXT,
  prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, merged_into_project TEXT, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL, prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);`;

export const CLAUDE_MEM_OBSERVATIONS = [
  {
    session: "mem-s1",
    project: "shop",
    type: "decision",
    title: "Stripe webhooks are verified with the signing secret",
    subtitle: "webhook handler",
    narrative: "The webhook handler rejects any event whose Stripe-Signature header does not verify against the endpoint's signing secret.",
    facts: ["Unverified events answer 400", "The secret is read from STRIPE_WEBHOOK_SECRET"],
    concepts: ["security", "payments"],
    at: Date.UTC(2025, 4, 2, 9, 15),
  },
  {
    session: "mem-s1",
    project: "shop",
    type: "bugfix",
    title: "Cart totals rounded twice",
    subtitle: null,
    narrative: "Totals were rounded per line and again for the sum, losing a cent on large carts; now only the sum is rounded.",
    facts: [],
    concepts: ["gotcha"],
    at: Date.UTC(2025, 4, 2, 9, 40),
  },
  {
    session: "mem-s2",
    project: "infra",
    type: "discovery",
    title: "Nightly backups go to the eu-west bucket",
    subtitle: null,
    narrative: "The backup cron uploads pg_dump archives to the eu-west bucket and keeps fourteen days.",
    facts: ["Retention: 14 days"],
    concepts: ["how-it-works"],
    at: Date.UTC(2025, 5, 10, 22, 5),
  },
];

/** A claude-mem database at `file` with two sessions, three observations and one summary. */
export function buildClaudeMemDb(file: string, opts: { legacy?: boolean } = {}): string {
  const db = new Database(file, { create: true });
  const schema = opts.legacy ? SCHEMA.replaceAll("memory_session_id", "sdk_session_id") : SCHEMA;
  db.exec(schema);
  const sessionCol = opts.legacy ? "sdk_session_id" : "memory_session_id";
  for (const [i, s] of ["mem-s1", "mem-s2"].entries()) {
    db.run(`INSERT INTO sdk_sessions (content_session_id, ${sessionCol}, project, started_at, started_at_epoch, status) VALUES (?, ?, ?, ?, ?, 'completed')`, [
      `claude-${i}`,
      s,
      i === 0 ? "shop" : "infra",
      new Date(Date.UTC(2025, 4, 2)).toISOString(),
      Date.UTC(2025, 4, 2),
    ]);
  }
  for (const o of CLAUDE_MEM_OBSERVATIONS) {
    db.run(
      `INSERT INTO observations (${sessionCol}, project, type, title, subtitle, narrative, facts, concepts, content_hash, created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        o.session,
        o.project,
        o.type,
        o.title,
        o.subtitle,
        o.narrative,
        JSON.stringify(o.facts),
        JSON.stringify(o.concepts),
        o.title,
        new Date(o.at).toISOString(),
        o.at,
      ],
    );
  }
  // A row with no text at all: left out with one line, the rest imported.
  db.run(
    `INSERT INTO observations (${sessionCol}, project, type, content_hash, created_at, created_at_epoch) VALUES ('mem-s2', 'infra', 'change', 'empty', '2025-06-10T22:06:00Z', ?)`,
    [Date.UTC(2025, 5, 10, 22, 6)],
  );
  db.run(
    `INSERT INTO session_summaries (${sessionCol}, project, request, investigated, learned, completed, next_steps, created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      "mem-s1",
      "shop",
      "Harden the payment webhook",
      "How Stripe signs its events",
      "Signature checks need the raw request body, not the parsed JSON",
      "Verification and a regression test",
      "Rotate the signing secret in staging",
      "2025-05-02T10:00:00Z",
      Date.UTC(2025, 4, 2, 10),
    ],
  );
  db.close();
  return file;
}

/**
 * A Claude Code home from test/fixtures/import/claude-code/home in a temp
 * folder: the project's automatic-memory folder renamed to the slug of where
 * the project now lies, and ~/.claude.json naming that project, as Claude
 * Code keeps them.
 */
export function buildClaudeCodeHome(): string {
  const home = mkdtempSync(join(tmpdir(), "claude-home-"));
  cpSync(join(import.meta.dir, "..", "fixtures", "import", "claude-code", "home"), home, { recursive: true });
  const project = join(home, "code", "shop");
  renameSync(join(home, ".claude", "projects", "-work-code-shop"), join(home, ".claude", "projects", slugOf(project)));
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ numStartups: 3, projects: { [project]: { allowedTools: [] } } }));
  return home;
}
