-- memories_rank held refreshed_at (and link_count) so /recent's full scoring
-- could read an index instead of the rows. Since 0012, memories_project_touched
-- covers every column importance reads, and refreshed_at moves each time recall
-- shows a memory: the old index cost two of the ~37 WAL pages a /recall-index
-- prompt wrote (5 picks), and each link insert rewrote it too. What still needs
-- it is max(strength) per project (/recent's bound) and the per-project strength
-- order: (project, strength) gives both, and neither showing nor linking moves it.
DROP INDEX IF EXISTS memories_rank;
CREATE INDEX IF NOT EXISTS memories_project_strength ON memories(project, strength);
