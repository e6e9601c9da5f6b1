-- A token per member (issue 36): only the SHA-256 of each token is kept. A
-- revoked token keeps its row (the audit log and `token list` name it), so a
-- name is unique among live tokens only.
CREATE TABLE IF NOT EXISTS tokens (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
  projects TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  last_used_at INTEGER,
  revoked_at INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS tokens_live_name ON tokens(name) WHERE revoked_at IS NULL;
-- Who did what: bounded by age and row count (core/audit/tuning.ts), pruned by the server.
CREATE TABLE IF NOT EXISTS audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT,
  peer TEXT
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log(at);
-- The member whose token created a memory (NULL: before tokens, or created by the server itself).
ALTER TABLE memories ADD COLUMN created_by TEXT;
