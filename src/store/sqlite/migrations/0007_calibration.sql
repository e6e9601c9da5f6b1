-- Similarity calibration of each embedder on this store: the cosine
-- distribution of random memory pairs and of nearest neighbours, from which
-- every embedder-dependent threshold is derived (src/core/search/calibration.ts).
-- Keyed by embedder id: a new model gets its own row on first use.
-- IF NOT EXISTS throughout: a migration may be replayed on a store whose
-- version was rolled back (the tests of older migrations do).
CREATE TABLE IF NOT EXISTS embedder_calibration (
  embedder_id TEXT PRIMARY KEY,
  -- Memories in the store when it was measured: a store grown well past
  -- this is measured again.
  memories INTEGER NOT NULL,
  computed_at INTEGER NOT NULL,
  -- JSON {random: {p50, p90, p99}, nearest: {p10, p50, p90}, pairs, samples}
  stats TEXT NOT NULL
);

-- The running topic of a recall session (JSON: a decayed prompt vector and
-- keyword bag), blended into each new prompt's query. Goes with its session.
CREATE TABLE IF NOT EXISTS recall_topics (
  session_id TEXT PRIMARY KEY REFERENCES recall_sessions(session_id) ON DELETE CASCADE,
  topic TEXT NOT NULL
);
