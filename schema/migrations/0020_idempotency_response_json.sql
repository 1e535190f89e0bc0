-- A replayed answer must be the first answer byte for byte (Stripe replays the same body). jsonb keeps the value but
-- not its key order (it sorts keys by length, then bytes), so a retry with the same Idempotency-Key got the same
-- JSON with its keys reordered. json keeps the text as written.
ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json;
