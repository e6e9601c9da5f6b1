-- At most one running nightly run per day, across every process (and, on
-- PostgreSQL, every server): starting a run is one INSERT that this index
-- refuses when another run of the day is running, never a read-then-write.
-- A crash could leave older rows "running" beside a forced rerun; the newest
-- one stays running (it is resumed), the older ones become partial.
UPDATE nightly_runs SET status = 'partial'
 WHERE status = 'running' AND id NOT IN (SELECT max(id) FROM nightly_runs WHERE status = 'running' GROUP BY day);
CREATE UNIQUE INDEX IF NOT EXISTS nightly_runs_one_running ON nightly_runs(day) WHERE status = 'running';
