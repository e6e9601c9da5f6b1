-- Every change to which memories have vectors, or to their project, in commit
-- order: a running server replays the rows past its cursor before a vector
-- search when another connection (the nightly CLI, import, a second server)
-- has written, so its in-memory index is never stale. vec0 takes no triggers,
-- so these hang on memories: every vector write goes with a memories write.
-- Old rows are pruned at start-up; a reader that falls behind the pruned
-- range reloads the whole index.
CREATE TABLE IF NOT EXISTS vector_changes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  seq INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS vector_changes_insert AFTER INSERT ON memories BEGIN
  INSERT INTO vector_changes(seq) VALUES (new.seq);
END;
CREATE TRIGGER IF NOT EXISTS vector_changes_delete AFTER DELETE ON memories BEGIN
  INSERT INTO vector_changes(seq) VALUES (old.seq);
END;
CREATE TRIGGER IF NOT EXISTS vector_changes_update AFTER UPDATE OF content, project ON memories BEGIN
  INSERT INTO vector_changes(seq) VALUES (new.seq);
END;
