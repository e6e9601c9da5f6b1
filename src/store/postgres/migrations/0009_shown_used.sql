-- Use detection without a receipt (the SQLite twin, 0018_shown_used.sql, says why).
ALTER TABLE __SCHEMA__.recall_shown ADD COLUMN IF NOT EXISTS used_turn INTEGER;
