-- A batch line's first server-run call (an image_generation call of a /v1/responses line) is marked before it is made.
-- A later attempt of the batch's run (its worker stopped before the line's outcome was recorded) finds the line marked
-- and ends it failed instead of answering it again, which would make the image a second time.
ALTER TABLE batch_requests ADD COLUMN called_at timestamptz;
