-- Anchors: the code a memory is about. One row per memory and repository:
-- the repository (remote URL without credentials, or its root folder name),
-- the branch and commit the session was at, and the repository-relative
-- paths it read or changed (a JSON array). `stale` is the last mark a client
-- sent after checking the anchor against git (JSON, see core/memories/anchors.ts),
-- NULL when the files are as they were. Rows go with their memory.
CREATE TABLE IF NOT EXISTS memory_anchors (
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  repo TEXT NOT NULL,
  branch TEXT,
  commit_id TEXT NOT NULL,
  paths TEXT NOT NULL,
  anchored_at INTEGER NOT NULL,
  stale TEXT,
  stale_at INTEGER,
  PRIMARY KEY (memory_id, repo)
);
CREATE INDEX IF NOT EXISTS memory_anchors_repo ON memory_anchors(repo);
