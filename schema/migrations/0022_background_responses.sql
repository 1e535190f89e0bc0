-- Background responses (POST /v1/responses with background: true). `job` holds what the worker's activity runs (the
-- planned lane request, the tools offered, the session and rate-limit windows to charge) while the response is queued
-- or in progress; it is cleared by whichever ends the response first (the worker's last write or a cancel), so one
-- writer wins. The response's events go to the `events` stream `response:<id>` (GET ...?stream=true resumes them).
ALTER TABLE responses ADD COLUMN job json;
