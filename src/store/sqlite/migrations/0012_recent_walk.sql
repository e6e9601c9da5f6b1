-- /recent walks memories from the most recently touched (created or refreshed)
-- down and stops once nothing further down can reach its top rows
-- (store/sqlite/search-recent.ts). The key is the later of the two times,
-- which bounds both time terms of importance; the other columns importance
-- reads make the walk a covering-index read. The expression must stay
-- spelled exactly as the queries spell it for the planner to use it.
CREATE INDEX IF NOT EXISTS memories_touched ON memories(max(created_at, refreshed_at), strength, link_count, refreshed_at, created_at);
CREATE INDEX IF NOT EXISTS memories_project_touched ON memories(project, max(created_at, refreshed_at), strength, link_count, refreshed_at, created_at);
