-- Similarity calibration of each embedder on this store: the cosine
-- distribution of random memory pairs and of nearest neighbours, from which
-- every embedder-dependent threshold is derived (src/core/calibration.ts).
-- Keyed by embedder id: a new model gets its own row on first use.
CREATE TABLE embedder_calibration (
  embedder_id TEXT PRIMARY KEY,
  -- Memories in the store when it was measured: a store grown well past
  -- this is measured again.
  memories INTEGER NOT NULL,
  computed_at INTEGER NOT NULL,
  -- JSON {random: {p50, p90, p99}, nearest: {p10, p50, p90}, pairs, samples}
  stats TEXT NOT NULL
);

-- The running topic of a recall session (JSON: a decayed prompt vector and
-- term bag), blended into each new prompt's query.
ALTER TABLE recall_sessions ADD COLUMN topic TEXT;
