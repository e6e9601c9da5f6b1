-- Fragments the distiller's substance gate rejected (model output, already
-- redacted, cut to a preview): kept until the nightly job writes them to its
-- log and digest, then deleted. Raw transcripts never land here.
CREATE TABLE IF NOT EXISTS distill_dropped (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  content TEXT NOT NULL
);
