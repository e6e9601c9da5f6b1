-- Re-checking stale memories (nightly "recheck"); see SQLite's 0011_evidence.sql
-- for what each column holds.
ALTER TABLE __SCHEMA__.memory_anchors ADD COLUMN evidence TEXT;
ALTER TABLE __SCHEMA__.memory_anchors ADD COLUMN rechecked TEXT;
ALTER TABLE __SCHEMA__.memory_anchors ADD COLUMN confirmed_at BIGINT;
