-- Re-checking stale memories (nightly "recheck"). Per anchor:
-- `evidence`: a short excerpt (at most DISTILL_EVIDENCE_MAX_CHARS) of the
-- already denoised and redacted session segment the memory was distilled
-- from, redacted once more before it is stored; the one bounded exception to
-- "raw session content is discarded" (README), NULL when distill.keepEvidence
-- is off or the anchor came through /ingest. Goes with the memory (cascade).
-- `rechecked`: the stale mark (its substance, see core/nightly/recheck.ts)
-- the model last answered for, so one mark costs one model call.
-- `confirmed_at`: when the model last confirmed the memory against the code
-- of the mark's commit (the anchor's commit then moves to that commit).
ALTER TABLE memory_anchors ADD COLUMN evidence TEXT;
ALTER TABLE memory_anchors ADD COLUMN rechecked TEXT;
ALTER TABLE memory_anchors ADD COLUMN confirmed_at INTEGER;
