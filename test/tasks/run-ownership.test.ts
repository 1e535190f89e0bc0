import { sql } from 'slonik';
import { z } from 'zod';
import { rng } from '../../bench/helpers';
import type { Db } from '../../activities/store/db';
import { readEventsAfter, type EventRow } from '../../activities/store/events';
import {
  beginTaskRun,
  claimTaskRun,
  completeSaveStep,
  completeStep,
  finishTaskRun,
  LITERAL_SAVE_MAX,
  releaseTaskRun,
  runSaveStep,
  settleSteps,
  StaleRunError,
  startStep,
} from '../../activities/store/task-runs';
import { createTask, getTask, patchTask, stepsOf, taskRow } from '../../activities/store/tasks';
import { taskStream } from '../../schema/tasks';
import { useStoreDatabase } from '../helpers/store-db';

// The run bookkeeping of the step path against the real PostgreSQL, driven the way the DAG
// workflow drives it (every ready step at once), without Temporal in between.
jest.setTimeout(180_000);

const store = useStoreDatabase({ maxConnections: 10 });
let db: Db;
let tenantId: string;
beforeAll(() => {
  ({ db, tenantId } = store);
});

type Spec = { id: string; depends_on: string[] };

/** A random DAG: each step depends on up to three earlier ones. */
function randomDag(next: () => number): Spec[] {
  const n = 3 + Math.floor(next() * 6);
  return Array.from({ length: n }, (_, i) => {
    const deps = new Set<string>();
    for (let k = 0; k < 3 && i > 0; k++) if (next() < 0.4) deps.add(`s${Math.floor(next() * i)}`);
    return { id: `s${i}`, depends_on: [...deps] };
  });
}

async function newTask(specs: Spec[]): Promise<string> {
  const steps = specs.map((s) => ({ ...s, title: s.id, action: 'save' as const, args: { content: 'x' } }));
  return (await createTask(db, { tenantId, body: { title: 'run', steps } as never })).id;
}

/** What a save step stores (output, document with one chunk), as the activity prepares it. */
function saveOf(taskId: string, stepId: string, text: string) {
  return {
    output: { title: stepId, content: text },
    doc: {
      tenantId,
      sourceKind: 'ingest' as const,
      title: stepId,
      mediaType: 'text/plain',
      sizeBytes: Buffer.byteLength(text),
      text,
      provenance: { task_id: taskId, step_id: stepId },
      chunks: [text],
    },
  };
}

/**
 * Runs every step like the workflow does: each step starts as soon as its dependencies completed.
 * `fused(stepId)`: that step runs as a literal save (start and completion in one statement).
 */
async function runDag(
  taskId: string,
  runId: string,
  specs: Spec[],
  fused?: (stepId: string) => boolean,
): Promise<void> {
  const done = new Map<string, Promise<void>>();
  const run = (s: Spec): Promise<void> => {
    let p = done.get(s.id);
    if (!p) {
      p = (async () => {
        await Promise.all(s.depends_on.map((d) => run(specs.find((x) => x.id === d)!)));
        if (fused?.(s.id)) {
          const saved = await runSaveStep(db, {
            tenantId,
            taskId,
            stepId: s.id,
            runId,
            save: saveOf(taskId, s.id, 'x'),
          });
          if (saved !== null) return;
        }
        const started = await startStep(db, { tenantId, taskId, stepId: s.id, runId });
        if (started.done) return;
        await completeStep(db, { tenantId, taskId, stepId: s.id, runId, result: `result of ${s.id}` });
      })();
      done.set(s.id, p);
    }
    return p;
  };
  await Promise.all(specs.map(run));
  await finishTaskRun(db, { tenantId, taskId, runId, status: 'completed' });
}

/** Tails a stream by id the way an SSE reader does, until the `done` event; `dropAfter` disconnects once and resumes from the last id seen. */
async function tail(stream: string, dropAfter: number): Promise<{ events: EventRow[]; resumedAt: number }> {
  const events: EventRow[] = [];
  let resumedAt = -1;
  let after = 0;
  for (;;) {
    const rows = await readEventsAfter(db, {
      tenantId,
      stream,
      afterId: after,
      limit: dropAfter > 0 && resumedAt < 0 ? 1 : 500,
    });
    for (const r of rows) {
      events.push(r);
      after = r.id;
    }
    if (resumedAt < 0 && events.length >= dropAfter) resumedAt = events.length; // reconnect: the cursor is all that is kept
    if (events.some((e) => e.type === 'done')) return { events, resumedAt };
    if (!rows.length) await new Promise((r) => setTimeout(r, 2));
  }
}

test('100 runs of random DAGs (fixed seed) with parallel steps: each stream is ordered, complete, and resumable by id', async () => {
  const next = rng(18);
  const runs = Array.from({ length: 100 }, () => randomDag(next));
  const drops = runs.map(() => 1 + Math.floor(next() * 5));
  // About half the steps run as literal saves (one statement, two events), mixed with the others in batches.
  const fusedSteps = runs.map((specs) => new Set(specs.filter(() => next() < 0.5).map((s) => s.id)));
  // Ten runs at a time, each with a reader tailing its stream while the steps write.
  for (let batch = 0; batch < runs.length; batch += 10) {
    await Promise.all(
      runs.slice(batch, batch + 10).map(async (specs, j) => {
        const taskId = await newTask(specs);
        const { run: claimed } = await claimTaskRun(db, { tenantId, taskId });
        const runId = claimed!.runKey;
        expect(claimed!.steps).toHaveLength(specs.length);
        const [seen] = await Promise.all([
          tail(taskStream(taskId), drops[batch + j]),
          runDag(taskId, runId, specs, (id) => fusedSteps[batch + j].has(id)),
        ]);
        const all = await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 });

        // The tail (with its reconnect) saw exactly what was committed, in id order, nothing twice.
        expect(seen.events.map((e) => e.id)).toEqual(all.map((e) => e.id));
        expect(seen.resumedAt).toBeGreaterThan(0);
        for (let i = 1; i < all.length; i++) expect(all[i].id).toBeGreaterThan(all[i - 1].id);

        const steps = all.filter((e) => e.type === 'step').map((e) => e.data as { step_id: string; status: string });
        const pos = (id: string, status: string) => steps.findIndex((s) => s.step_id === id && s.status === status);
        for (const s of specs) {
          expect(steps.filter((e) => e.step_id === s.id).map((e) => e.status)).toEqual(['running', 'completed']);
          for (const d of s.depends_on) expect(pos(d, 'completed')).toBeLessThan(pos(s.id, 'running'));
        }
        expect(all[all.length - 1].type).toBe('done');
      }),
    );
  }
});

test('a stale run cannot write: after a cancel and a second run, the first run changes nothing', async () => {
  const specs = [
    { id: 'a', depends_on: [] },
    { id: 'b', depends_on: [] },
    { id: 'c', depends_on: ['a', 'b'] },
  ];
  const taskId = await newTask(specs);
  const first = { tenantId, taskId, runId: (await claimTaskRun(db, { tenantId, taskId })).run!.runKey };
  await startStep(db, { ...first, stepId: 'a' });

  await patchTask(db, { tenantId, taskId, patch: { status: 'cancelled' } });
  await expect(completeStep(db, { ...first, stepId: 'a', result: 'late' })).rejects.toBeInstanceOf(StaleRunError);
  await expect(startStep(db, { ...first, stepId: 'b' })).rejects.toBeInstanceOf(StaleRunError);

  // A second run takes the task; the first can neither take it back nor touch its steps.
  const claimed = (await claimTaskRun(db, { tenantId, taskId })).run!;
  const second = { tenantId, taskId, runId: claimed.runKey };
  expect(second.runId).not.toBe(first.runId);
  expect(claimed.steps.map((p) => [p.id, p.status])).toEqual([
    ['a', 'pending'],
    ['b', 'pending'],
    ['c', 'pending'],
  ]);
  expect(await beginTaskRun(db, first)).toBeNull();
  await expect(startStep(db, { ...first, stepId: 'a' })).rejects.toBeInstanceOf(StaleRunError);
  await settleSteps(db, { ...first, stepIds: ['a', 'b', 'c'], status: 'failed', reason: 'stale' });
  expect(await finishTaskRun(db, { ...first, status: 'failed' })).toBeNull();
  const floor = (await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 })).at(-1)!.id;

  await runDag(taskId, second.runId, specs);
  const rows = await stepsOf(db, tenantId, [taskId]);
  expect(rows.map((r) => [r.id, r.status, r.run_id, r.result])).toEqual([
    ['a', 'completed', second.runId, 'result of a'],
    ['b', 'completed', second.runId, 'result of b'],
    ['c', 'completed', second.runId, 'result of c'],
  ]);
  const after = await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: floor });
  expect(after.filter((e) => e.type === 'step').map((e) => (e.data as { status: string }).status)).toEqual(
    expect.not.arrayContaining(['failed']),
  );
  expect(after.at(-1)?.data).toMatchObject({ done: true, status: 'completed' });
});

test('the claim stamps a fresh run key on the task and the steps it will run, with the plan; a released claim cannot write', async () => {
  const specs = [
    { id: 'a', depends_on: [] },
    { id: 'b', depends_on: ['a'] },
  ];
  const taskId = await newTask(specs);
  const claim = await claimTaskRun(db, { tenantId, taskId });
  const run = { tenantId, taskId, runId: claim.run!.runKey };
  expect(run.runId).toMatch(/^run_/);
  expect(claim.task.run_id).toBe(run.runId);
  expect(claim.run!.steps).toEqual([
    { id: 'a', action: 'save', depends_on: [], status: 'pending', lit: { title: 'a', content: 'x' } },
    { id: 'b', action: 'save', depends_on: ['a'], status: 'pending', lit: { title: 'b', content: 'x' } },
  ]);
  expect((await stepsOf(db, tenantId, [taskId])).map((r) => r.run_id)).toEqual([run.runId, run.runId]);
  // A second claim while it runs attaches: no new key, no plan.
  const again = await claimTaskRun(db, { tenantId, taskId });
  expect(again.attached).toBe(true);
  expect(again.run).toBeUndefined();

  // The start failed: the release takes the key off, so a workflow that started after all cannot write.
  await releaseTaskRun(db, { tenantId, taskId, previous: claim.previous, runKey: run.runId });
  expect((await taskRow(db, tenantId, taskId))?.status).toBe('pending');
  await expect(startStep(db, { ...run, stepId: 'a' })).rejects.toBeInstanceOf(StaleRunError);
  expect(await finishTaskRun(db, { ...run, status: 'completed' })).toBeNull();

  // A run whose start only looked failed and that already moved a step owns the task: the release leaves it.
  const next = await claimTaskRun(db, { tenantId, taskId });
  const live = { tenantId, taskId, runId: next.run!.runKey };
  expect(next.run!.steps.map((p) => p.status)).toEqual(['pending', 'pending']);
  await startStep(db, { ...live, stepId: 'a' });
  await releaseTaskRun(db, { tenantId, taskId, previous: next.previous, runKey: live.runId });
  expect(await taskRow(db, tenantId, taskId)).toMatchObject({ status: 'running', run_id: live.runId });
  await completeStep(db, { ...live, stepId: 'a', result: 'done a' });

  // A later claim plans the completed step as completed and keeps its result and run.
  await patchTask(db, { tenantId, taskId, patch: { status: 'cancelled' } });
  const third = await claimTaskRun(db, { tenantId, taskId });
  expect(third.run!.steps.map((p) => [p.id, p.status, p.lit])).toEqual([
    ['a', 'completed', undefined],
    ['b', 'pending', { title: 'b', content: 'x' }],
  ]);
  expect((await stepsOf(db, tenantId, [taskId])).map((r) => [r.id, r.run_id, r.result])).toEqual([
    ['a', live.runId, 'done a'],
    ['b', third.run!.runKey, null],
  ]);
});

test('a run started before the claim carried its key begins with the Temporal run id; it cannot begin on a keyed claim', async () => {
  const taskId = await newTask([{ id: 'only', depends_on: [] }]);
  const claim = await claimTaskRun(db, { tenantId, taskId });
  expect(await beginTaskRun(db, { tenantId, taskId, runId: 'temporal-run' })).toBeNull();
  // What the claim left before it stamped a key: no run id until the run's begin.
  await db.query(sql.unsafe`UPDATE tasks SET run_id = NULL WHERE id = ${taskId} AND tenant_id = ${tenantId}`);
  await db.query(sql.unsafe`UPDATE task_steps SET run_id = NULL WHERE task_id = ${taskId} AND tenant_id = ${tenantId}`);
  const run = { tenantId, taskId, runId: 'temporal-run' };
  expect(await beginTaskRun(db, run)).toHaveLength(1);
  await expect(startStep(db, { ...run, runId: claim.run!.runKey, stepId: 'only' })).rejects.toBeInstanceOf(
    StaleRunError,
  );
  await startStep(db, { ...run, stepId: 'only' });
  await completeStep(db, { ...run, stepId: 'only', result: 'r' });
  expect(await finishTaskRun(db, { ...run, status: 'completed' })).toMatchObject({ status: 'completed' });
});

test('the finish is one statement: its done event carries the task exactly as GET returns it (secret redacted, timestamps, steps in order)', async () => {
  const steps = [
    {
      id: 'z',
      title: 'Zed',
      action: 'save' as const,
      args: { content: 'a "quoted" ü text' },
      depends_on: [],
      order_num: 2,
    },
    {
      id: 'h',
      title: 'Hook',
      action: 'webhook' as const,
      args: { url: 'http://127.0.0.1:9/x', secret: 'do-not-show' },
      depends_on: [],
      order_num: 1,
    },
    { id: 'e', title: 'Empty', action: 'save' as const, args: {}, depends_on: ['z'], order_num: 3 },
  ];
  const body = { title: 'finish', description: 'd', priority: 3, metadata: { k: 'v' }, steps };
  const taskId = (await createTask(db, { tenantId, body: body as never })).id;
  const run = { tenantId, taskId, runId: (await claimTaskRun(db, { tenantId, taskId })).run!.runKey };
  for (const id of ['h', 'z', 'e']) {
    await startStep(db, { ...run, stepId: id });
    await completeStep(db, { ...run, stepId: id, result: `result of ${id}` });
  }
  const finished = await finishTaskRun(db, { ...run, status: 'completed' });
  const stored = await getTask(db, tenantId, taskId);
  expect(stored!.status).toBe('completed');
  expect(stored!.steps.map((x) => x.id)).toEqual(['h', 'z', 'e']);
  expect(stored!.steps[0].args.secret).toBe('[redacted]');
  expect(finished).toEqual(stored);
  const done = (await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 })).at(-1)!;
  expect(done.data).toEqual({ done: true, task_id: taskId, status: 'completed', task: stored });
  // Once: the run no longer owns a running task.
  expect(await finishTaskRun(db, { ...run, status: 'failed' })).toBeNull();
});

test('the last step’s save ends the run in its own statement: done after its events, the task as the API returns it', async () => {
  const steps = [
    { id: 'a', title: 'A', action: 'save' as const, args: { content: 'first' }, depends_on: [] },
    { id: 'b', title: 'B', action: 'save' as const, args: { content: 'second' }, depends_on: ['a'] },
  ];
  const taskId = (await createTask(db, { tenantId, body: { title: 'fold', steps } as never })).id;
  const run = { tenantId, taskId, runId: (await claimTaskRun(db, { tenantId, taskId })).run!.runKey };
  expect(await runSaveStep(db, { ...run, stepId: 'a', save: saveOf(taskId, 'a', 'first') })).toMatchObject({
    finished: false,
  });
  const last = await runSaveStep(db, { ...run, stepId: 'b', save: saveOf(taskId, 'b', 'second'), finish: true });
  expect(last).toEqual({ result: expect.stringMatching(/^doc_/), finished: true });
  const stored = await getTask(db, tenantId, taskId);
  expect(stored!.status).toBe('completed');
  expect(stored!.steps[1]).toMatchObject({ id: 'b', status: 'completed', result: last!.result, attempts: 1 });
  const events = await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 });
  expect(
    events.map(
      (e) =>
        `${e.type}:${(e.data as { step_id?: string; status: string }).step_id ?? ''}:${(e.data as { status: string }).status}`,
    ),
  ).toEqual(['step:a:running', 'step:a:completed', 'step:b:running', 'step:b:completed', 'done::completed']);
  const ids = events.map((e) => e.id);
  expect(ids).toEqual([...ids].sort((x, y) => x - y));
  // The task in `done` shows the last step as the statement left it, exactly as a read does now.
  expect(events.at(-1)!.data).toEqual({ done: true, task_id: taskId, status: 'completed', task: stored });
  expect(await finishTaskRun(db, { ...run, status: 'completed' })).toBeNull();

  // A run whose key no longer owns the task (a newer claim stamped another): the save is stored, the run is not ended.
  const other = (await createTask(db, { tenantId, body: { title: 'lost', steps: steps.slice(0, 1) } as never })).id;
  const lost = { tenantId, taskId: other, runId: (await claimTaskRun(db, { tenantId, taskId: other })).run!.runKey };
  await db.query(sql.unsafe`UPDATE tasks SET run_id = 'run-newer' WHERE id = ${other}`);
  expect(await runSaveStep(db, { ...lost, stepId: 'a', save: saveOf(other, 'a', 'first'), finish: true })).toEqual({
    result: expect.stringMatching(/^doc_/),
    finished: false,
  });
  expect((await taskRow(db, tenantId, other))!.status).toBe('running');
  const otherEvents = await readEventsAfter(db, { tenantId, stream: taskStream(other), afterId: 0 });
  expect(otherEvents.map((e) => e.type)).toEqual(['step', 'step']);
});

test('a retried step activity after its completion committed records the step once', async () => {
  const taskId = await newTask([{ id: 'only', depends_on: [] }]);
  const run = { tenantId, taskId, runId: (await claimTaskRun(db, { tenantId, taskId })).run!.runKey };
  await startStep(db, { ...run, stepId: 'only' });
  await completeStep(db, { ...run, stepId: 'only', result: 'once' });
  // The worker died before reporting: Temporal retries the activity.
  expect(await startStep(db, { ...run, stepId: 'only' })).toEqual({ done: true, result: 'once' });
  await completeStep(db, { ...run, stepId: 'only', result: 'twice' });
  const events = await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 });
  expect(events.map((e) => (e.data as { status: string }).status)).toEqual(['running', 'completed']);
  expect((await stepsOf(db, tenantId, [taskId]))[0].result).toBe('once');
});

test('concurrent steps of one run share statements: one transaction for a fan-out, events in call order, a bad write fails alone', async () => {
  const specs = Array.from({ length: 20 }, (_, i) => ({ id: `f${i}`, depends_on: [] }));
  const taskId = await newTask(specs);
  const run = { tenantId, taskId, runId: (await claimTaskRun(db, { tenantId, taskId })).run!.runKey };
  const stream = taskStream(taskId);

  // Twenty starts issued together: one statement (one transaction: the events share their xmin), ids in call order.
  await Promise.all(specs.map((s) => startStep(db, { ...run, stepId: s.id })));
  const started = await db.any(sql.type(z.object({ step: z.string(), tx: z.string() }))`
    SELECT data->>'step_id' AS step, xmin::text AS tx FROM events WHERE tenant_id = ${tenantId} AND stream = ${stream} ORDER BY id`);
  expect(started.map((e) => e.step)).toEqual(specs.map((s) => s.id));
  expect(new Set(started.map((e) => e.tx)).size).toBe(1);

  // A result PostgreSQL refuses (NUL in text) fails its own completion only; the batch's others commit.
  const outcomes = await Promise.allSettled(
    specs.map((s, i) => completeStep(db, { ...run, stepId: s.id, result: i === 7 ? 'bad\u0000' : `ok ${s.id}` })),
  );
  expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
  expect(outcomes[7].status).toBe('rejected');
  const rows = await stepsOf(db, tenantId, [taskId]);
  expect(rows.filter((r) => r.status === 'completed').map((r) => r.id)).toEqual(
    specs.filter((_, i) => i !== 7).map((s) => s.id),
  );
  expect(rows.find((r) => r.id === 'f7')?.status).toBe('running');
  const completed = (await readEventsAfter(db, { tenantId, stream, afterId: 0 })).filter(
    (e) => (e.data as { status: string }).status === 'completed',
  );
  expect(completed.map((e) => (e.data as { step_id: string }).step_id)).toEqual(
    specs.filter((_, i) => i !== 7).map((s) => s.id),
  );
});

test("save completions write the step's output and document in the completing statement: one transaction for a fan-out, once per run and step, nothing for a stale run", async () => {
  const specs = Array.from({ length: 10 }, (_, i) => ({ id: `v${i}`, depends_on: [] }));
  const taskId = await newTask(specs);
  const run = { tenantId, taskId, runId: (await claimTaskRun(db, { tenantId, taskId })).run!.runKey };
  await Promise.all(specs.map((s) => startStep(db, { ...run, stepId: s.id })));
  const save = (stepId: string, text: string) => saveOf(taskId, stepId, text);
  const results = await Promise.all(
    specs.map(async (s) => {
      const done = await completeSaveStep(db, { ...run, stepId: s.id, save: save(s.id, `text of ${s.id}`) });
      expect(done.finished).toBe(false); // no `finish`: the run goes on
      return done.result;
    }),
  );

  const Row = z.object({
    step: z.string(),
    result: z.string(),
    output: z.string(),
    content: z.string(),
    doc: z.string(),
    text: z.string(),
    task_output_id: z.string(),
    chunks: z.number(),
    txs: z.array(z.string()),
  });
  const rows = await db.any(sql.type(Row)`
    SELECT s.id AS step, s.result, o.id AS output, o.content, d.id AS doc, d.text, d.provenance->>'task_output_id' AS task_output_id,
      (SELECT count(*)::int FROM chunks c WHERE c.document_id = d.id) AS chunks,
      ARRAY[s.xmin::text, o.xmin::text, d.xmin::text, (SELECT min(c.xmin::text) FROM chunks c WHERE c.document_id = d.id)] AS txs
    FROM task_steps s
      JOIN task_outputs o ON o.tenant_id = s.tenant_id AND o.task_id = s.task_id AND o.step_id = s.id AND o.run_id = ${run.runId}
      JOIN documents d ON d.tenant_id = s.tenant_id AND d.id = s.result
    WHERE s.tenant_id = ${tenantId} AND s.task_id = ${taskId} ORDER BY s.order_num`);
  expect(rows.map((r) => r.step)).toEqual(specs.map((s) => s.id));
  rows.forEach((r, i) => {
    // The result is the document of the step's own output; the step, its output, document and chunk commit together.
    expect(results[i]).toBe(r.result);
    expect(r).toMatchObject({
      doc: r.result,
      content: `text of ${r.step}`,
      text: `text of ${r.step}`,
      task_output_id: r.output,
      chunks: 1,
    });
    expect(r.doc).toBe(`doc_${r.output.slice('out_'.length)}`);
  });
  // Ten completions issued together: one statement, one transaction.
  expect(new Set(rows.flatMap((r) => r.txs)).size).toBe(1);
  const events = await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 });
  expect(events.filter((e) => (e.data as { status: string }).status === 'completed').map((e) => e.data)).toEqual(
    rows.map((r) => expect.objectContaining({ step_id: r.step, snippet: r.result })),
  );

  // A retry after the completion committed answers the same document and writes nothing new.
  expect(await completeSaveStep(db, { ...run, stepId: 'v0', save: save('v0', 'other text') })).toEqual({
    result: results[0],
    finished: false,
  });
  // A run that does not own the step writes neither an output nor a document.
  await expect(
    completeSaveStep(db, { ...run, runId: 'run-stale', stepId: 'v1', save: save('v1', 'stale text') }),
  ).rejects.toBeInstanceOf(StaleRunError);
  const counts = await db.one(sql.type(z.object({ outputs: z.number(), docs: z.number() }))`
    SELECT (SELECT count(*)::int FROM task_outputs WHERE tenant_id = ${tenantId} AND task_id = ${taskId}) AS outputs,
      (SELECT count(*)::int FROM documents WHERE tenant_id = ${tenantId} AND provenance->>'task_id' = ${taskId}) AS docs`);
  expect(counts).toEqual({ outputs: 10, docs: 10 });
  const v0 = await db.oneFirst(sql.type(z.object({ content: z.string() }))`
    SELECT content FROM task_outputs WHERE tenant_id = ${tenantId} AND task_id = ${taskId} AND step_id = 'v0'`);
  expect(v0).toBe('text of v0');
});

test('a literal save runs in one statement: the plan carries what it saves, its running and completed events in order, a retry answers its result, a stale run writes nothing', async () => {
  const steps = [
    { id: 'lit', title: 'Lit', action: 'save' as const, args: { content: 'literal text' }, depends_on: [] },
    { id: 'titled', title: 'T', action: 'save' as const, args: { content: 'y', title: 'Own title' }, depends_on: [] },
    {
      id: 'ref',
      title: 'R',
      action: 'save' as const,
      args: { content: 'of {{steps.lit.result}}' },
      depends_on: ['lit'],
    },
    { id: 'ctx', title: 'C', action: 'save' as const, args: {}, depends_on: ['lit'] },
    { id: 'big', title: 'B', action: 'save' as const, args: { content: 'z'.repeat(LITERAL_SAVE_MAX) }, depends_on: [] },
    { id: 'hook', title: 'H', action: 'webhook' as const, args: { url: 'http://127.0.0.1:9/x' }, depends_on: [] },
  ];
  const taskId = (await createTask(db, { tenantId, body: { title: 'lit', steps } as never })).id;
  const claimed = (await claimTaskRun(db, { tenantId, taskId })).run!;
  const run = { tenantId, taskId, runId: claimed.runKey };
  const plan = claimed.steps;
  expect(Object.fromEntries(plan!.map((s) => [s.id, s.lit]))).toEqual({
    lit: { title: 'Lit', content: 'literal text' },
    titled: { title: 'Own title', content: 'y' },
    ref: undefined,
    ctx: undefined,
    big: undefined,
    hook: undefined,
  });

  // A run that does not own the step: nothing written, and the ordinary path then says why.
  expect(
    await runSaveStep(db, { ...run, runId: 'run-stale', stepId: 'lit', save: saveOf(taskId, 'lit', 'stale') }),
  ).toBeNull();
  const done = await runSaveStep(db, { ...run, stepId: 'lit', save: saveOf(taskId, 'lit', 'literal text') });
  expect(done).toEqual({ result: expect.stringMatching(/^doc_/), finished: false });
  const result = done!.result;
  const [row] = (await stepsOf(db, tenantId, [taskId])).filter((r) => r.id === 'lit');
  expect(row).toMatchObject({ status: 'completed', result, attempts: 1, run_id: run.runId });
  expect(row.started_at).not.toBeNull();
  expect(row.finished_at).not.toBeNull();
  const events = await readEventsAfter(db, { tenantId, stream: taskStream(taskId), afterId: 0 });
  expect(events.map((e) => e.data)).toEqual([
    { task_id: taskId, step_id: 'lit', status: 'running', snippet: '' },
    { task_id: taskId, step_id: 'lit', status: 'completed', snippet: result },
  ]);
  expect(events[1].id).toBeGreaterThan(events[0].id);

  // A retry (the activity's report was lost): the fused write matches nothing, the ordinary path answers the result.
  expect(await runSaveStep(db, { ...run, stepId: 'lit', save: saveOf(taskId, 'lit', 'again') })).toBeNull();
  expect(await startStep(db, { ...run, stepId: 'lit' })).toEqual({ done: true, result });
  const counts = await db.one(sql.type(z.object({ outputs: z.number(), docs: z.number(), events: z.number() }))`
    SELECT (SELECT count(*)::int FROM task_outputs WHERE tenant_id = ${tenantId} AND task_id = ${taskId}) AS outputs,
      (SELECT count(*)::int FROM documents WHERE tenant_id = ${tenantId} AND provenance->>'task_id' = ${taskId}) AS docs,
      (SELECT count(*)::int FROM events WHERE tenant_id = ${tenantId} AND stream = ${taskStream(taskId)}) AS events`);
  expect(counts).toEqual({ outputs: 1, docs: 1, events: 2 });

  // After a cancel the run owns nothing: a literal save writes nothing.
  await patchTask(db, { tenantId, taskId, patch: { status: 'cancelled' } });
  expect(await runSaveStep(db, { ...run, stepId: 'titled', save: saveOf(taskId, 'titled', 'y') })).toBeNull();
  await expect(startStep(db, { ...run, stepId: 'titled' })).rejects.toBeInstanceOf(StaleRunError);
  expect(
    await db.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM task_outputs WHERE tenant_id = ${tenantId} AND task_id = ${taskId}`),
  ).toBe(1);
});
