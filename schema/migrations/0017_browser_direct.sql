-- Browser commands go straight to the owning worker (issue 12, speed): each browser worker reports the
-- address of its command endpoint and the random token that endpoint requires. The token is not
-- listed by GET /v1/daemons (listBrowserWorkers names its columns).
ALTER TABLE browser_workers ADD COLUMN IF NOT EXISTS endpoint text;
ALTER TABLE browser_workers ADD COLUMN IF NOT EXISTS token text;
