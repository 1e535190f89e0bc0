import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

export const TaskOutputRow = z.object({
  id: z.string(),
  task_id: z.string().nullable(),
  step_id: z.string(),
  run_id: z.string(),
  title: z.string().nullable(),
  content: z.string(),
  created_at: z.string(),
});
export type TaskOutputRow = z.infer<typeof TaskOutputRow>;

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

/** The outputs saved for a task, oldest first. */
export async function listTaskOutputs(db: Db, opts: { tenantId: string; taskId: string }): Promise<readonly TaskOutputRow[]> {
  return db.any(sql.type(TaskOutputRow)`
    SELECT id, task_id, step_id, run_id, title, content, created_at FROM task_outputs
    WHERE tenant_id = ${opts.tenantId} AND task_id = ${opts.taskId} ORDER BY created_at, id`);
}

/**
 * The knowledge-store document a `save` step wrote for a task output (keyed by the output id,
 * which is one per (run, step)), or null.
 */
export async function findTaskOutputDocument(db: Db, opts: { tenantId: string; outputId: string }): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM documents WHERE tenant_id = ${opts.tenantId} AND provenance->>'task_output_id' = ${opts.outputId}
    ORDER BY created_at, id LIMIT 1`);
}
