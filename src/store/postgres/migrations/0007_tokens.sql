-- A token per member and the audit log; see SQLite's 0017_tokens.sql for what each column holds.
CREATE TABLE IF NOT EXISTS __SCHEMA__.tokens (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
  projects TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  last_used_at BIGINT,
  revoked_at BIGINT
);
CREATE UNIQUE INDEX IF NOT EXISTS tokens_live_name ON __SCHEMA__.tokens(name) WHERE revoked_at IS NULL;
CREATE TABLE IF NOT EXISTS __SCHEMA__.audit_log (
  id BIGSERIAL PRIMARY KEY,
  at BIGINT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT,
  peer TEXT
);
CREATE INDEX IF NOT EXISTS audit_log_at ON __SCHEMA__.audit_log(at);
ALTER TABLE __SCHEMA__.memories ADD COLUMN IF NOT EXISTS created_by TEXT;
