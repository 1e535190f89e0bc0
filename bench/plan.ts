/**
 * Tool plan benchmark, same run, interleaved: POST /v1/tools/execute-plan with Accept:
 * text/event-stream read to the `done` event (validation, run row, workflow plan-<id>, one
 * activity per step with its exactly-once result row and event, SSE) vs the critical path of the
 * same tools called directly in-process (each level's calls in parallel, levels one after another).
 * Shape: fast tools only (calculator, text), 4 levels: 4 wide, 2, 1 reading references, 1.
 * Goal (issue 13): plan p50 <= direct critical path p50 + 50 ms per level. Prints PASS/FAIL; exits
 * non-zero on FAIL. Run: npm run -s bench -- plan   (ROUNDS=8 by default)
 */
import { buildWorkerToolContext } from '../activities/tools/context';
import { resolveRefs } from '../activities/tools/plan-check';
import { findTool, runTool } from '../activities/tools/registry';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { fmt, percentile, startBenchStack } from './helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const PER_LEVEL_MS = 50;

const calc = (id: string, expression: string, depends_on: string[] = []) => ({
  id,
  tool: 'calculator',
  args: { expression },
  depends_on,
});
const STEPS = [
  calc('a', '1+1'),
  calc('b', '2*3'),
  calc('c', 'sqrt(16)'),
  calc('d', '10/4'),
  calc('e', '{{steps.a.result.result}} + {{steps.b.result.result}}'),
  calc('f', '{{steps.c.result.result}} * {{steps.d.result.result}}'),
  calc('g', '{{steps.e.result.result}} + {{steps.f.result.result}}'),
  calc('h', '{{steps.g.result.result}} ^ 2'),
];
const LEVELS = [['a', 'b', 'c', 'd'], ['e', 'f'], ['g'], ['h']];

let lastRunId = '';

async function viaPlan(url: string, key: string, planId: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/tools/execute-plan`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ plan_id: planId }),
  });
  const text = await res.text(); // the server ends the stream after the `done` event
  if (!text.includes('"status":"completed"')) throw new Error(`run did not complete: ${text.slice(-300)}`);
  const elapsed = performance.now() - started;
  lastRunId = /"run_id":"([^"]+)"/.exec(text)?.[1] ?? '';
  return elapsed;
}

/** The same calls made directly: each level in parallel, references resolved from the level before. */
async function direct(ctx: ReturnType<typeof buildWorkerToolContext>): Promise<number> {
  const results = new Map<string, unknown>();
  const started = performance.now();
  for (const level of LEVELS) {
    await Promise.all(
      level.map(async (id) => {
        const s = STEPS.find((x) => x.id === id)!;
        const out = await runTool(findTool(s.tool, ['runtime:chat'])!, resolveRefs(s.args, results), ctx);
        if (!out.ok) throw new Error(out.error);
        results.set(id, out.result);
      }),
    );
  }
  return performance.now() - started;
}

/** PLAN_TRACE=1: the last run's workflow history, each event with its time since the first (where a level's time goes). */
async function trace(client: Client, runId: string): Promise<void> {
  const history = await client.workflow.getHandle(`plan-${runId}`).fetchHistory();
  const events = history.events ?? [];
  const t0 = tsMs(events[0]?.eventTime);
  for (const e of events) {
    const type = String(e.eventType ?? '').replace('EVENT_TYPE_', '');
    const name =
      e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.markerRecordedEventAttributes?.markerName ?? '';
    console.log(`  ${fmt(tsMs(e.eventTime) - t0).padStart(8)} ms  ${String(e.eventId).padStart(3)} ${type} ${name}`);
  }
}

function tsMs(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : 0;
}

async function main(): Promise<void> {
  const { app, client, close } = await startBenchStack({ workflowsPath: require.resolve('../workflows') });
  let failed = false;
  try {
    const key = await app.key(['runtime:chat']);
    const created = await fetch(`${app.url}/v1/tools/plan`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ goal: 'bench', steps: STEPS }),
    });
    const plan = (await created.json()) as { id: string; levels: string[][] };
    if (created.status !== 201) throw new Error(`plan not created: ${JSON.stringify(plan)}`);
    const ctx = buildWorkerToolContext(
      { config: app.config, db: app.db, log: pino({ level: 'silent' }) },
      { keyId: 'bench', tenantId: 'bench', kind: 'runtime', scopes: ['runtime:chat'], app: null },
    );
    await viaPlan(app.url, key, plan.id); // warm-up: bundle caches, connections
    await direct(ctx);
    const planMs: number[] = [];
    const directMs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      planMs.push(await viaPlan(app.url, key, plan.id));
      directMs.push(await direct(ctx));
    }
    const p50 = percentile(planMs, 50);
    const d50 = percentile(directMs, 50);
    const budget = d50 + PER_LEVEL_MS * plan.levels.length;
    const ok = p50 <= budget;
    failed = !ok;
    console.log(
      `${ok ? 'PASS' : 'FAIL'}  ${STEPS.length} steps in ${plan.levels.length} levels (${ROUNDS} rounds): direct critical path p50 ${fmt(d50)} ms | ` +
        `execute-plan p50 ${fmt(p50)} ms p90 ${fmt(percentile(planMs, 90))} ms | ratio ${(p50 / d50).toFixed(1)}x | ` +
        `overhead ${fmt((p50 - d50) / plan.levels.length)} ms per level (goal <= ${PER_LEVEL_MS} ms per level, budget ${fmt(budget)} ms)`,
    );
    if (process.env.PLAN_TRACE) await trace(client, lastRunId);
  } finally {
    await close();
  }
  console.log(failed ? 'FAIL: plan wall time over budget' : 'PASS: all goals met');
  if (failed) process.exitCode = 1;
}

main().catch((err: Error) => {
  console.error(err);
  process.exitCode = 1;
});
