import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { documentAlong, fitsOneStatement, type NewDocument } from './documents';
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

/**
 * A `save` step's output row and the document that indexes it, in ONE statement (one implicit
 * transaction, one round trip instead of two). The document id is `doc_` + the output id's
 * suffix and its provenance names the output, both taken from the output row the statement
 * wrote or found (a retry finds its earlier row, and its document, even one written by an older
 * version with a random output id).
 * @returns the document id, or null when the document does not fit one statement (vectors, many chunks): then use saveTaskOutput and insertDocument
 */
export async function saveTaskOutputDocument(
  db: Db,
  opts: { tenantId: string; taskId: string; stepId: string; runId: string; title?: string; content: string },
  doc: Omit<NewDocument, 'id'>,
): Promise<string | null> {
  if (!fitsOneStatement(doc)) return null;
  const outputId = await db.oneFirst(sql.type(z.object({ id: z.string() }))`
    WITH o AS (
      INSERT INTO task_outputs (id, tenant_id, task_id, step_id, run_id, title, content)
      VALUES (${newId('out')}, ${opts.tenantId}, ${opts.taskId}, ${opts.stepId}, ${opts.runId}, ${opts.title ?? null}, ${opts.content})
      ON CONFLICT (tenant_id, run_id, step_id) DO UPDATE SET content = task_outputs.content
      RETURNING id),
    ${documentAlong(doc, {
      from: sql.fragment`o`,
      id: sql.fragment`'doc_' || substr(o.id, 5)`,
      provenance: sql.fragment`${sql.jsonb(JSON.parse(JSON.stringify(doc.provenance ?? {})))} || jsonb_build_object('task_output_id', o.id)`,
    })}
    SELECT o.id FROM o`);
  return `doc_${outputId.slice('out_'.length)}`;
}
