-- Memories: `seq` is the integer rowid shared with the FTS5 and vec0 tables;
-- `id` is the public UUID. Times are milliseconds since the epoch.
CREATE TABLE memories (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  content TEXT NOT NULL,
  memory_type TEXT NOT NULL,
  project TEXT,
  source_agent TEXT NOT NULL DEFAULT 'unknown',
  source_agent_id TEXT,
  source_domain TEXT,
  source_session TEXT,
  privacy TEXT NOT NULL DEFAULT 'WORK',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  refreshed_at INTEGER NOT NULL,
  strength REAL NOT NULL DEFAULT 1.0,
  shown_count INTEGER NOT NULL DEFAULT 0,
  used_count INTEGER NOT NULL DEFAULT 0,
  last_shown_at INTEGER,
  last_used_at INTEGER,
  -- Denormalised count of links at either end, kept by triggers, so ranking
  -- by connections needs no join on the hot path.
  link_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_project ON memories(project);
CREATE INDEX memories_session ON memories(source_session);
CREATE INDEX memories_created ON memories(created_at);
CREATE INDEX memories_type ON memories(memory_type);

CREATE TABLE links (
  from_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  to_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  relationship TEXT NOT NULL,
  weight REAL NOT NULL DEFAULT 1.0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (from_id, to_id, relationship)
);
CREATE INDEX links_to ON links(to_id);
CREATE TRIGGER links_count_insert AFTER INSERT ON links BEGIN
  UPDATE memories SET link_count = link_count + 1 WHERE id IN (new.from_id, new.to_id);
END;
CREATE TRIGGER links_count_delete AFTER DELETE ON links BEGIN
  UPDATE memories SET link_count = link_count - 1 WHERE id IN (old.from_id, old.to_id);
END;

CREATE TABLE memory_tags (
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  weight REAL NOT NULL DEFAULT 1.0,
  PRIMARY KEY (memory_id, tag)
);
CREATE INDEX memory_tags_tag ON memory_tags(tag);

-- One row per distilled session segment, so a retried segment is skipped even
-- when it produced no memory.
CREATE TABLE segments (
  key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  memory_count INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX segments_session ON segments(session_id);

-- Recall adoption history (shown / used), kept after a memory is deleted.
CREATE TABLE memory_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX memory_events_at ON memory_events(at);

CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE VIRTUAL TABLE memories_fts USING fts5(
  content,
  content='memories',
  content_rowid='seq',
  tokenize='porter unicode61'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  INSERT INTO memories_fts(rowid, content) VALUES (new.seq, new.content);
END;

CREATE VIRTUAL TABLE memory_vec USING vec0(embedding float[384] distance_metric=cosine);
-- vec0 cannot take part in a foreign key: the deletion lives in a trigger so
-- no code path can leave an orphan vector behind.
CREATE TRIGGER memory_vec_delete AFTER DELETE ON memories BEGIN
  DELETE FROM memory_vec WHERE rowid = old.seq;
END;
