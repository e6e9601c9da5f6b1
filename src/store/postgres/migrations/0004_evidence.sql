-- Re-checking stale memories (nightly "recheck"); see SQLite's 0011_evidence.sql
-- for what each column holds.
ALTER TABLE __SCHEMA__.memory_anchors ADD COLUMN IF NOT EXISTS evidence TEXT;
ALTER TABLE __SCHEMA__.memory_anchors ADD COLUMN IF NOT EXISTS rechecked TEXT;
ALTER TABLE __SCHEMA__.memory_anchors ADD COLUMN IF NOT EXISTS confirmed_at BIGINT;
