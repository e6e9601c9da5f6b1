-- Sorted access for /recent's threshold search (core/search/recent.ts): the strongest,
-- most linked and newest memories, overall and per project, straight from an index.
CREATE INDEX IF NOT EXISTS memories_strength ON memories(strength);
CREATE INDEX IF NOT EXISTS memories_link_count ON memories(link_count);
CREATE INDEX IF NOT EXISTS memories_project_link_count ON memories(project, link_count);
CREATE INDEX IF NOT EXISTS memories_project_created ON memories(project, created_at);
-- Every column importance reads: its fallback scan reads this index, not the
-- rows with their content (~40% faster at 100k), and (project, strength) serves
-- the per-project strength list.
CREATE INDEX IF NOT EXISTS memories_rank ON memories(project, strength, refreshed_at, link_count, created_at);
