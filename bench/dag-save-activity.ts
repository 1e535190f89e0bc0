// The "raw + save" baseline of bench/dag.ts: a save's own writes with none of the task platform around them.
import type { ActivityDeps } from '../activities/deps';
import { saveTaskOutputDocument } from '../activities/store/task-outputs';
import { prepareLiteralSave } from '../activities/tasks/actions';

export interface RawSaveInput {
  tenantId: string;
  taskId: string;
  runId: string;
  stepId: string;
}

/**
 * `benchSave`: what an API `save` step of the bench stores (output row, document, chunk: the same
 * preparation and the same one-statement write as the service's save), without the run's bookkeeping
 * (no step row, no events, no NOTIFY, no stream). Registered only on the bench's worker.
 */
export function rawSaveActivities(deps: ActivityDeps) {
  return {
    async benchSave(i: RawSaveInput): Promise<string> {
      const save = await prepareLiteralSave(deps, i, { title: i.stepId, content: 'x' });
      const output = { ...i, title: i.stepId, content: 'x' };
      const docId = await saveTaskOutputDocument(deps.db, output, save.doc);
      if (!docId) throw new Error('the bench save did not fit one statement');
      return docId;
    },
  };
}

export type RawSaveActivities = ReturnType<typeof rawSaveActivities>;
