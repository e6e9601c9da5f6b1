-- At most one running nightly run per day across every server over this
-- database: starting a run is one INSERT this index refuses when another run
-- of the day is running (src/store/postgres/nightly.ts startRun), never a
-- read-then-write. Older rows a crash left "running" beside a newer one
-- become partial first (the newest is the one resumed).
UPDATE __SCHEMA__.nightly_runs SET status = 'partial'
 WHERE status = 'running' AND id NOT IN (SELECT max(id) FROM __SCHEMA__.nightly_runs WHERE status = 'running' GROUP BY day);
CREATE UNIQUE INDEX IF NOT EXISTS nightly_runs_one_running ON __SCHEMA__.nightly_runs(day) WHERE status = 'running';
