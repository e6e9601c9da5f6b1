-- /recent's lists (search.ts, recentBounded): memories by the later of their
-- creation and refresh times ("touched"; both time terms of importance only
-- fall as it gets older), all of them and per project. Every column importance
-- reads is carried in the index, so the walk is an index-only scan and only
-- the winners' rows are read from the heap. The expression is spelled as the
-- queries spell it, or the planner will not use these indexes.
CREATE INDEX IF NOT EXISTS memories_touched ON __SCHEMA__.memories ((greatest(created_at, refreshed_at)))
  INCLUDE (seq, strength, link_count, created_at, refreshed_at);
CREATE INDEX IF NOT EXISTS memories_project_touched ON __SCHEMA__.memories (project, (greatest(created_at, refreshed_at)))
  INCLUDE (seq, strength, link_count, created_at, refreshed_at);
