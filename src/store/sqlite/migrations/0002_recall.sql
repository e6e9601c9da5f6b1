-- Per-session state of the pushed recall index, kept in the database so a
-- server restart does not show an agent the same memories again.
CREATE TABLE recall_sessions (
  session_id TEXT PRIMARY KEY,
  -- Prompts seen in this session since the last reset (short ones included).
  turn INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
);
CREATE INDEX recall_sessions_updated ON recall_sessions(updated_at);

-- Which memory was last shown in which session at which turn: the
-- suppression window is measured against it. No foreign key to memories: a
-- deleted memory's row is harmless and goes with the session.
CREATE TABLE recall_shown (
  session_id TEXT NOT NULL REFERENCES recall_sessions(session_id) ON DELETE CASCADE,
  memory_id TEXT NOT NULL,
  turn INTEGER NOT NULL,
  PRIMARY KEY (session_id, memory_id)
);

-- One row per nightly consolidation run. `cursor` is the JSON progress of
-- each step, written in the same transaction as the step's work, so a crashed
-- run resumes where it stopped; `digest` is what the run did (JSON).
CREATE TABLE nightly_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  day TEXT NOT NULL,
  status TEXT NOT NULL,
  forced INTEGER NOT NULL DEFAULT 0,
  owner TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL,
  finished_at INTEGER,
  cursor TEXT NOT NULL DEFAULT '{}',
  digest TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX nightly_runs_day ON nightly_runs(day, id);

-- Counts by project and type (the memory index of GET /learnings, GET /index)
-- read this index alone instead of every memory row.
CREATE INDEX memories_project_type ON memories(project, memory_type);
