import { sql } from 'slonik';
import { IDEMPOTENCY_LEASE_SECONDS } from '../../activities/store/idempotency';
import type { Harness } from './harness';

/**
 * Makes a key's row look like a request that claimed it, started its job and died before storing its
 * answer, with the lease over: the next request with the key takes the claim over and runs again.
 */
export async function abandonKey(h: Harness, tenantId: string, route: string, key: string): Promise<void> {
  await h.db.query(sql.unsafe`
    UPDATE idempotency_keys SET response = NULL, status = NULL,
      created_at = now() - make_interval(secs => ${IDEMPOTENCY_LEASE_SECONDS + 1})
    WHERE tenant_id = ${tenantId} AND route = ${route} AND key = ${key}`);
}

/** Workflow runs Temporal holds under one workflow id (a second job would have its own id). */
export async function workflowRuns(h: Harness, workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of h.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) n++;
  return n;
}
