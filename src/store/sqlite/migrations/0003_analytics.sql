-- GET /dashboard/data reads indexes only, so it stays fast at 100k memories
-- and ~300k recall events (bench/dashboard.ts).

-- Showings and uses per day: range counts of one kind over a time span.
CREATE INDEX memory_events_kind_at ON memory_events(kind, at);
-- Memories added per day and type: range counts of one type over a time span.
CREATE INDEX memories_type_created ON memories(memory_type, created_at);
-- Never shown / never used: partial indexes are counted without reading the
-- table, and a row leaves them once (0 -> 1), so showings stay cheap to record.
CREATE INDEX memories_never_shown ON memories(shown_count) WHERE shown_count = 0;
CREATE INDEX memories_never_used ON memories(used_count) WHERE used_count = 0;

-- The primary domain of each tagged memory (its highest-weight tag, ties by
-- name), kept by triggers on memory_tags: finding it at read time means a
-- pass over every tag of every memory (~70 ms of CPU at 100k memories).
-- No foreign key: a memory's deletion cascades to its tags, whose delete
-- trigger removes the row.
CREATE TABLE memory_primary_domain (
  memory_id TEXT PRIMARY KEY,
  domain TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX memory_primary_domain_domain ON memory_primary_domain(domain);

CREATE TRIGGER memory_tags_primary_insert AFTER INSERT ON memory_tags BEGIN
  INSERT OR REPLACE INTO memory_primary_domain(memory_id, domain)
    SELECT memory_id, tag FROM memory_tags WHERE memory_id = new.memory_id ORDER BY weight DESC, tag LIMIT 1;
END;
CREATE TRIGGER memory_tags_primary_delete AFTER DELETE ON memory_tags BEGIN
  DELETE FROM memory_primary_domain WHERE memory_id = old.memory_id;
  INSERT INTO memory_primary_domain(memory_id, domain)
    SELECT memory_id, tag FROM memory_tags WHERE memory_id = old.memory_id ORDER BY weight DESC, tag LIMIT 1;
END;
CREATE TRIGGER memory_tags_primary_update AFTER UPDATE ON memory_tags BEGIN
  DELETE FROM memory_primary_domain WHERE memory_id IN (old.memory_id, new.memory_id);
  INSERT INTO memory_primary_domain(memory_id, domain)
    SELECT memory_id, tag FROM (
      SELECT memory_id, tag, row_number() OVER (PARTITION BY memory_id ORDER BY weight DESC, tag) AS r
        FROM memory_tags WHERE memory_id IN (old.memory_id, new.memory_id)
    ) WHERE r = 1;
END;

INSERT INTO memory_primary_domain(memory_id, domain)
  SELECT memory_id, tag FROM (
    SELECT memory_id, tag, row_number() OVER (PARTITION BY memory_id ORDER BY weight DESC, tag) AS r FROM memory_tags
  ) WHERE r = 1;
