-- Use detection without a receipt (recall.receipts false, or the receipt
-- pruned): POST /recall/used falls back to the session's shown state. The
-- turn whose showing a detected use was counted for, so each showing counts
-- once (a later showing has another turn and may count again); null: not yet.
ALTER TABLE recall_shown ADD COLUMN used_turn INTEGER;
