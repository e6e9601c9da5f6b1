-- Receipts and feedback (issue 37); see SQLite's 0016_receipts.sql for what each column holds.
CREATE TABLE IF NOT EXISTS __SCHEMA__.recall_receipts (
  id TEXT PRIMARY KEY,
  at BIGINT NOT NULL,
  kind TEXT NOT NULL,
  via TEXT NOT NULL,
  session_id TEXT,
  turn INTEGER,
  agent TEXT,
  project TEXT,
  prompt TEXT,
  prompt_hash TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  budget INTEGER,
  injected TEXT NOT NULL,
  dropped TEXT NOT NULL,
  used TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS recall_receipts_at ON __SCHEMA__.recall_receipts(at, id);
CREATE INDEX IF NOT EXISTS recall_receipts_session ON __SCHEMA__.recall_receipts(session_id, at);
ALTER TABLE __SCHEMA__.memory_events ADD COLUMN IF NOT EXISTS detail TEXT;
CREATE INDEX IF NOT EXISTS memory_events_feedback ON __SCHEMA__.memory_events(memory_id, at) WHERE kind NOT IN ('shown', 'used');
CREATE INDEX IF NOT EXISTS memories_shown_unused ON __SCHEMA__.memories(shown_count) WHERE used_count = 0;
