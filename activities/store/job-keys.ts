import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';

export interface JobKey {
  workflowId: string;
  tenantId: string;
  keyId: string;
  kind: string;
}

/**
 * The INSERT that records the key that started a job (the first key recorded for a workflow id
 * stays), once per row of the relation `from` (e.g. a CTE that is empty unless a run was claimed)
 * when given, else once: for statements that record it along with the job's own row.
 */
export function jobKeyInsert(o: JobKey, from?: string) {
  return sql.fragment`
    INSERT INTO job_keys (workflow_id, tenant_id, key_id, kind)
    SELECT ${o.workflowId}, ${o.tenantId}, ${o.keyId}, ${o.kind} ${from ? sql.fragment`FROM ${sql.identifier([from])}` : sql.fragment``}
    ON CONFLICT (workflow_id) DO NOTHING`;
}

/** Remembers the key that started a job (the gateway cancels it when the key is revoked). */
export async function recordJobKey(db: Db, o: JobKey): Promise<void> {
  await db.query(sql.prepared('job_key_insert', z.unknown())`${jobKeyInsert(o)}`);
}

/** Claims the revoked key's jobs for cancellation (one replica wins each). */
export async function claimJobsOfRevokedKey(db: Db, keyId: string): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ workflow_id: z.string() }))`
    UPDATE job_keys SET cancelled_reason = 'key_revoked'
    WHERE key_id = ${keyId} AND cancelled_reason IS NULL
      AND EXISTS (SELECT 1 FROM api_keys WHERE id = ${keyId} AND revoked_at IS NOT NULL)
    RETURNING workflow_id`);
}

/** Keys revoked while no replica was listening: those with jobs not yet claimed. */
export async function revokedKeysWithJobs(db: Db): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ key_id: z.string() }))`
    SELECT DISTINCT j.key_id FROM job_keys j JOIN api_keys k ON k.id = j.key_id
    WHERE j.cancelled_reason IS NULL AND k.revoked_at IS NOT NULL`);
}

/** Why the gateway cancelled a job, if it did (e.g. key_revoked). */
export async function jobCancelReason(db: Db, tenantId: string, workflowId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ cancelled_reason: z.string().nullable() }))`
    SELECT cancelled_reason FROM job_keys WHERE tenant_id = ${tenantId} AND workflow_id = ${workflowId}`);
}
