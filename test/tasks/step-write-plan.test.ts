import pg from 'pg';
import {
  claimTaskRun,
  completeStep,
  startStep,
  stepBatchQuery,
  type StepWrite,
} from '../../activities/store/task-runs';
import { createTask } from '../../activities/store/tasks';
import { useStoreDatabase } from '../helpers/store-db';

// What a step write reads of task_steps must not grow with the tenant's other tasks. The batch
// statement is a named prepared statement, so a connection keeps the generic plan it chose while the
// table was small; with an index on tenant_id alone, that plan looked each dependency up by scanning
// every step of the tenant (measured in `bench dag`: 2-9 ms a step write after a few hundred runs).
jest.setTimeout(120_000);

const store = useStoreDatabase();

/** A value as an SQL literal of the prepared statement's parameter (arrays in PostgreSQL's array text form). */
function literal(client: pg.Client, v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (Array.isArray(v)) {
    const items = v.map((x) => (x === null ? 'NULL' : `"${String(x).replace(/[\\"]/g, (c) => `\\${c}`)}"`));
    return client.escapeLiteral(`{${items.join(',')}}`);
  }
  return client.escapeLiteral(typeof v === 'object' ? JSON.stringify(v) : String(v));
}

type PlanNode = {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
};

/** Rows of task_steps the plan read (returned or filtered out), over every loop of every node. */
function stepRowsRead(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'task_steps'
      ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1)
      : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + stepRowsRead(p), 0);
}

/** Runs the batch statement of `writes` with a generic plan (as a prepared statement gets), rolled back. */
async function genericPlanOf(writes: StepWrite[]): Promise<PlanNode> {
  const q = stepBatchQuery(writes);
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    // Slonik's own placeholders ($slonik_N), as it rewrites them when it executes a query.
    await client.query(`PREPARE probe AS ${q.sql.replace(/\$slonik_(\d+)/g, '$$$1')}`);
    await client.query('BEGIN');
    const args = q.values.map((v) => literal(client, v)).join(', ');
    const r = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE probe(${args})`,
    );
    await client.query('ROLLBACK');
    return r.rows[0]['QUERY PLAN'][0].Plan;
  } finally {
    await client.end();
  }
}

test('a step start reads its own task and its dependencies, not the tenant’s 1,200 other steps', async () => {
  const { db, tenantId } = store;
  // The tenant's history: 48 tasks of 25 steps.
  for (let t = 0; t < 48; t++)
    await createTask(db, {
      tenantId,
      body: {
        title: `old ${t}`,
        steps: Array.from({ length: 25 }, (_, i) => ({
          id: `s${i}`,
          title: `s${i}`,
          action: 'save',
          args: { content: 'x' },
        })),
      } as never,
    });
  const task = await createTask(db, {
    tenantId,
    body: {
      title: 'probe',
      steps: [
        { id: 'a', title: 'a', action: 'save', args: { content: 'x' } },
        { id: 'b', title: 'b', action: 'save', args: { content: 'x' } },
        { id: 'c', title: 'c', action: 'save', args: { content: 'x' }, depends_on: ['a', 'b'] },
      ],
    } as never,
  });
  const claim = await claimTaskRun(db, { tenantId, taskId: task.id });
  const runId = claim.run!.runKey;
  for (const stepId of ['a', 'b']) {
    await startStep(db, { tenantId, taskId: task.id, stepId, runId });
    await completeStep(db, { tenantId, taskId: task.id, stepId, runId, result: `result of ${stepId}` });
  }
  const ref = { tenantId, taskId: task.id, stepId: 'c', runId };
  const plan = await genericPlanOf([{ ref, to: 'running', result: null }]);
  // The statement did its work: c started (one row, its dependencies' results with it).
  expect(plan['Actual Rows']).toBe(1);
  // Three steps of the task, two dependency lookups, a few re-reads: far below the tenant's 1,203 steps.
  expect(stepRowsRead(plan)).toBeLessThan(40);
  // The real path agrees: the start answers with the dependencies' results.
  const started = await startStep(db, ref);
  expect(started).toMatchObject({ done: false, depResults: { a: 'result of a', b: 'result of b' } });
});
