-- Vector search within a project (nearest.ts) scores a small project's rows
-- exactly. Read through memories' project index, each row's vector was a
-- separate memory_vec page (a project's rows are spread over the whole
-- table): 35k buffer accesses for a project of 11.7k rows at 100k. So the
-- vector row carries its memory's project, and one btree over it holds every
-- vector of a project together (INCLUDE: an index-only scan reads them in
-- order, five to a page): 2.9k buffers for the same project.
--
-- memory_vec.project mirrors memories.project: set from the memory when the
-- vector row is inserted (every insert path: ingest, import, re-embed,
-- `memsvc migrate`), and moved with it when a memory's project changes.
-- EXECUTE plans each lookup afresh (see 0005: a plan cached while a bulk
-- load's table was empty scanned it per row).
--
-- The table is rebuilt with the column filled (an UPDATE of every row would
-- leave the table, its primary key and the new index twice their size: the
-- old versions are not dead yet inside this transaction, so the index build
-- takes them too), then its indexes are built once, the HNSW graph with
-- memory enough to build it in memory. At 100k memories: about 4 minutes.
SET LOCAL maintenance_work_mem = '512MB';
CREATE TABLE __SCHEMA__.memory_vec_0010 AS
  SELECT v.seq, v.embedding, m.project FROM __SCHEMA__.memory_vec v JOIN __SCHEMA__.memories m ON m.seq = v.seq ORDER BY v.seq;
DROP TABLE __SCHEMA__.memory_vec;
ALTER TABLE __SCHEMA__.memory_vec_0010 RENAME TO memory_vec;
ALTER TABLE __SCHEMA__.memory_vec ALTER COLUMN seq SET NOT NULL, ALTER COLUMN embedding SET NOT NULL,
  ADD CONSTRAINT memory_vec_pkey PRIMARY KEY (seq),
  ADD CONSTRAINT memory_vec_seq_fkey FOREIGN KEY (seq) REFERENCES __SCHEMA__.memories(seq) ON DELETE CASCADE;
CREATE INDEX memory_vec_project ON __SCHEMA__.memory_vec (project) INCLUDE (seq, embedding);
CREATE INDEX memory_vec_hnsw ON __SCHEMA__.memory_vec USING hnsw (embedding vector_cosine_ops);

CREATE FUNCTION __SCHEMA__.memory_vec_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'SELECT project FROM __SCHEMA__.memories WHERE seq = $1' INTO NEW.project USING NEW.seq;
  RETURN NEW;
END $$;
CREATE TRIGGER memory_vec_project BEFORE INSERT ON __SCHEMA__.memory_vec
  FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.memory_vec_project();

CREATE FUNCTION __SCHEMA__.memories_vec_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'UPDATE __SCHEMA__.memory_vec SET project = $1 WHERE seq = $2' USING NEW.project, NEW.seq;
  RETURN NULL;
END $$;
CREATE TRIGGER memories_vec_project AFTER UPDATE OF project ON __SCHEMA__.memories
  FOR EACH ROW WHEN (OLD.project IS DISTINCT FROM NEW.project) EXECUTE FUNCTION __SCHEMA__.memories_vec_project();
