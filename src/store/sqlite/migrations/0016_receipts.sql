-- Receipts (issue 37): what each /recall-index answer and each agent search
-- gave the agent, with score parts, token counts and near misses. Bounded by
-- days and count (recall.receiptDays, recall.receiptMax) and dropped with
-- their session's recall state. `injected`, `dropped` and `used` are JSON.
-- No foreign keys: a receipt outlives a reset of its session (compaction)
-- and the deletion of a memory it names.
CREATE TABLE IF NOT EXISTS recall_receipts (
  id TEXT PRIMARY KEY,
  at INTEGER NOT NULL,
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
CREATE INDEX IF NOT EXISTS recall_receipts_at ON recall_receipts(at, id);
CREATE INDEX IF NOT EXISTS recall_receipts_session ON recall_receipts(session_id, at);

-- Feedback (wrong, outdated, useful, irrelevant, and retire/unretire/review
-- from the pages) is a memory event like shown and used, so export, import
-- and the nightly run carry it; `detail` holds its JSON (note, receipt, the
-- prompt's vector for irrelevant). Shown and used events leave it null.
ALTER TABLE memory_events ADD COLUMN detail TEXT;
-- The marks feedback leaves are read by memory: events that are not shown or used, few.
CREATE INDEX IF NOT EXISTS memory_events_feedback ON memory_events(memory_id, at) WHERE kind NOT IN ('shown', 'used');

-- The dashboard's candidates to retire: memories shown most and never used, read from the top.
CREATE INDEX IF NOT EXISTS memories_shown_unused ON memories(shown_count) WHERE used_count = 0;
