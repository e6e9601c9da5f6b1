-- Each similarity link moves the link_count of both its memories, and a
-- (project,) link_count index keeps rows ordered by it: a new memory with three
-- links rewrote ~18 leaf pages of those two indexes (at 100k, 18 of the ~71 WAL
-- pages an ingest wrote). /recent's walk reads the link list only from the top
-- (the hubs): rows with fewer than 8 links (99.9% of the bench store; the tail
-- of any store) are left out, and the walk takes 7 as their bound once it has
-- read the rest. Changes below 8 then write neither index. 8 is
-- RECENT_LINK_LIST_FROM in core/tuning.ts; a test checks the two agree.
-- memories_type is dropped: memories_type_created starts with the same column.
DROP INDEX IF EXISTS memories_link_count;
DROP INDEX IF EXISTS memories_project_link_count;
DROP INDEX IF EXISTS memories_type;
CREATE INDEX IF NOT EXISTS memories_link_count ON memories(link_count) WHERE link_count >= 8;
CREATE INDEX IF NOT EXISTS memories_project_link_count ON memories(project, link_count) WHERE link_count >= 8;
