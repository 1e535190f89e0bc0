-- The hourly retention sweep (workflow retentionSweepWorkflow) finds expired responses across tenants by expiry.
CREATE INDEX responses_expires_idx ON responses (expires_at);
