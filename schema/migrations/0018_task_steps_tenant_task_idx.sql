-- Every query of task_steps names one task and its tenant. With an index on tenant_id alone, a plan
-- (a prepared statement's generic plan above all, chosen once while the table was small) could take
-- it for "tenant_id = $1 AND task_id = $2" and read every step of the tenant to find one task's:
-- the step writes' dependency lookup and the finish's task JSON grew with the tenant's history
-- (measured: 0.03 ms a step write at 100 steps, 2-9 ms at 3,500). On (tenant_id, task_id), whichever
-- index a plan takes reads one task's steps; tenant-wide deletes still have their index.
DROP INDEX IF EXISTS task_steps_tenant_idx;
CREATE INDEX task_steps_tenant_task_idx ON task_steps (tenant_id, task_id);
