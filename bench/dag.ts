/**
 * Task DAG benchmark, same run, interleaved:
 *  - API: POST /v1/tasks (steps inline) + POST /v1/tasks/{id}/execute with Accept: text/event-stream,
 *    read to the final `done` event (auth, validation, DB claim, workflow start, per-step run
 *    bookkeeping in PostgreSQL, persisted events, LISTEN/NOTIFY fan-out to SSE);
 *  - raw: client.workflow.execute of a bare workflow running the same DAG shape over the no-op
 *    `echo` activity.
 * Shapes: a 10-step chain, and a 10-wide fan-out joined by one step. API steps are `save` steps of a
 * few bytes (the cheapest action: one insert). Prints p50/p90 per shape and the ratio API/raw.
 * Run: npm run -s bench -- dag   (ROUNDS=8 by default)
 */
import type { Client } from '@temporalio/client';
import { randomToken } from '../activities/store/ids';
import { fmt, percentile, startBenchStack } from './helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const N = 10;

type Shape = 'chain' | 'fan';

function stepsFor(shape: Shape) {
  const save = (id: string, deps: string[]) => ({ id, title: id, action: 'save', args: { content: 'x' }, depends_on: deps });
  if (shape === 'chain') return Array.from({ length: N }, (_, i) => save(`s${i}`, i ? [`s${i - 1}`] : []));
  const fan = Array.from({ length: N }, (_, i) => save(`s${i}`, []));
  return [...fan, save('join', fan.map((s) => s.id))];
}

/** Creates and runs a task through the API, reading the SSE stream to `done`. Returns ms. */
async function viaApi(url: string, key: string, shape: Shape): Promise<number> {
  const started = performance.now();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const task = (await (await fetch(`${url}/v1/tasks`, { method: 'POST', headers, body: JSON.stringify({ title: shape, steps: stepsFor(shape) }) })).json()) as { id: string };
  const res = await fetch(`${url}/v1/tasks/${task.id}/execute`, { method: 'POST', headers: { ...headers, accept: 'text/event-stream' } });
  const text = await res.text(); // the server ends the stream after the `done` event
  if (!text.includes('"done":true') || !text.includes('"status":"completed"')) throw new Error(`run did not complete: ${text.slice(-300)}`);
  return performance.now() - started;
}

async function viaRaw(client: Client, taskQueue: string, shape: Shape): Promise<number> {
  const started = performance.now();
  await client.workflow.execute('rawDagWorkflow', { taskQueue, workflowId: `raw-${randomToken(10)}`, args: [{ shape, n: N }] });
  return performance.now() - started;
}

async function main(): Promise<void> {
  const { app, client, taskQueue, close } = await startBenchStack({ workflowsPath: require.resolve('./dag-raw-workflow') });
  try {
    const key = await app.key(['runtime:records']);
    // Warm-up: one of each, not measured.
    for (const shape of ['chain', 'fan'] as const) {
      await viaApi(app.url, key, shape);
      await viaRaw(client, taskQueue, shape);
    }
    console.log(`task DAG benchmark: ${ROUNDS} rounds per shape, ${N} no-op steps, API (SSE to done) vs raw workflow, interleaved`);
    for (const shape of ['chain', 'fan'] as const) {
      const api: number[] = [];
      const raw: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        api.push(await viaApi(app.url, key, shape));
        raw.push(await viaRaw(client, taskQueue, shape));
      }
      const a50 = percentile(api, 50);
      const r50 = percentile(raw, 50);
      console.log(
        `${shape === 'chain' ? '10-step chain ' : '10-wide fan-out'}  raw p50 ${fmt(r50)} ms p90 ${fmt(percentile(raw, 90))} ms | ` +
          `API p50 ${fmt(a50)} ms p90 ${fmt(percentile(api, 90))} ms | ratio API/raw ${(a50 / r50).toFixed(2)}x ` +
          `(+${fmt((a50 - r50) / (shape === 'chain' ? N : N + 1))} ms per step)`,
      );
    }
  } finally {
    await close();
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
