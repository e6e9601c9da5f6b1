-- Link counts and primary domains kept once per statement instead of once
-- per row. Row triggers ran their lookups through plans that plpgsql cached
-- while a bulk load's tables were still empty (sequential scans), so every
-- copied tag and link scanned the whole table: memsvc migrate spent seconds
-- per batch in them (5k memories on PostgreSQL 15: 3.9 s for one batch of
-- tags). Statement triggers see the statement's rows as a transition table
-- and plan each run afresh (EXECUTE); an ingest's single rows cost the same.

DROP TRIGGER links_count ON __SCHEMA__.links;
DROP FUNCTION __SCHEMA__.links_count();

-- A self-link counts once, as before. The memories are locked in id order
-- first, FOR NO KEY UPDATE as the UPDATE itself would (FOR UPDATE would
-- conflict with the KEY SHARE locks the links' foreign-key checks take, and
-- deadlocked concurrent ingests): two writers linking shared neighbours lock
-- them in one order.
CREATE FUNCTION __SCHEMA__.links_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  rows_name TEXT := CASE WHEN TG_OP = 'INSERT' THEN 'new_rows' ELSE 'old_rows' END;
  sign INT := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
  EXECUTE format(
    'WITH ends AS (SELECT from_id AS id FROM %1$I UNION ALL SELECT to_id FROM %1$I WHERE to_id <> from_id),
          d AS (SELECT id, count(*)::int AS n FROM ends GROUP BY id),
          locked AS (SELECT m.id FROM __SCHEMA__.memories m JOIN d ON d.id = m.id ORDER BY m.id FOR NO KEY UPDATE OF m)
     UPDATE __SCHEMA__.memories m SET link_count = m.link_count + $1 * d.n
       FROM d WHERE m.id = d.id AND m.id IN (SELECT id FROM locked)', rows_name)
  USING sign;
  RETURN NULL;
END $$;
CREATE TRIGGER links_count_insert AFTER INSERT ON __SCHEMA__.links
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.links_count_rows();
CREATE TRIGGER links_count_delete AFTER DELETE ON __SCHEMA__.links
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.links_count_rows();

DROP TRIGGER memory_tags_primary ON __SCHEMA__.memory_tags;
DROP FUNCTION __SCHEMA__.memory_tags_primary();

CREATE FUNCTION __SCHEMA__.memory_tags_primary_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids TEXT[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE 'SELECT array_agg(DISTINCT memory_id) FROM new_rows' INTO ids;
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE 'SELECT array_agg(DISTINCT memory_id) FROM old_rows' INTO ids;
  ELSE
    EXECUTE 'SELECT array_agg(DISTINCT memory_id) FROM (SELECT memory_id FROM old_rows UNION SELECT memory_id FROM new_rows) x' INTO ids;
  END IF;
  IF ids IS NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE 'DELETE FROM __SCHEMA__.memory_primary_domain WHERE memory_id = ANY($1)' USING ids;
  EXECUTE 'INSERT INTO __SCHEMA__.memory_primary_domain(memory_id, domain)
    SELECT DISTINCT ON (memory_id) memory_id, tag FROM __SCHEMA__.memory_tags
     WHERE memory_id = ANY($1)
     ORDER BY memory_id, weight DESC, tag COLLATE "C"' USING ids;
  RETURN NULL;
END $$;
CREATE TRIGGER memory_tags_primary_insert AFTER INSERT ON __SCHEMA__.memory_tags
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.memory_tags_primary_rows();
CREATE TRIGGER memory_tags_primary_update AFTER UPDATE ON __SCHEMA__.memory_tags
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.memory_tags_primary_rows();
CREATE TRIGGER memory_tags_primary_delete AFTER DELETE ON __SCHEMA__.memory_tags
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.memory_tags_primary_rows();
