import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

/**
 * Stores the content of a `save` step as a tenant record. One row per (run, step): a retried
 * activity finds its earlier row and returns the same id.
 */
export async function saveTaskOutput(
  db: Db,
  opts: { tenantId: string; taskId: string; stepId: string; runId: string; title?: string; content: string },
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO task_outputs (id, tenant_id, task_id, step_id, run_id, title, content)
    VALUES (${newId('out')}, ${opts.tenantId}, ${opts.taskId}, ${opts.stepId}, ${opts.runId}, ${opts.title ?? null}, ${opts.content})
    ON CONFLICT (tenant_id, run_id, step_id) DO UPDATE SET content = task_outputs.content
    RETURNING id`);
}
