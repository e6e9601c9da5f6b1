-- Earlier versions of a memory: what PATCH /memory, memsvc_update, a
-- restore, a distill that restated or corrected it, or a nightly merge
-- replaced. `version` counts up per memory (the oldest are dropped past the
-- bound in tuning.ts, numbers are never reused); rows go with their memory.
CREATE TABLE IF NOT EXISTS memory_history (
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  content TEXT NOT NULL,
  memory_type TEXT NOT NULL,
  project TEXT,
  -- update | restore | distill | nightly-merge
  reason TEXT NOT NULL,
  -- nightly-merge: the id of the memory folded into this one.
  source_id TEXT,
  replaced_at INTEGER NOT NULL,
  PRIMARY KEY (memory_id, version)
);
