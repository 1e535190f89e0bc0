/**
 * Task DAG benchmark, same run, interleaved:
 *  - API: POST /v1/tasks (steps inline) + POST /v1/tasks/{id}/execute with Accept: text/event-stream,
 *    read to the final `done` event (auth, validation, DB claim, workflow start, per-step run
 *    bookkeeping in PostgreSQL, persisted events, LISTEN/NOTIFY fan-out to SSE);
 *  - raw: client.workflow.execute of a bare workflow running the same DAG shape over the no-op
 *    `echo` activity.
 * Shapes: a 10-step chain, a 10-wide fan-out joined by one step, a 100-wide fan-out/fan-in, and 10
 * concurrent 10-wide runs (throughput in steps/s). API steps are `save` steps of a few bytes (the
 * cheapest action; it writes an output row and a searchable document with its chunk). Prints p50/p90
 * per shape, the ratio API/raw and PASS/FAIL against the goals of issue 18; exits non-zero on any FAIL.
 * A third path, interleaved with the other two and printed as INFO (no goal): raw+save, the raw
 * workflow whose activities write what the API's save steps store (bench/dag-save-activity.ts), so
 * API/raw+save is the task platform's own cost (step state, events, NOTIFY, stream, claim, finish), and raw+save/raw
 * what the save's writes alone cost against the goal (flagged when that alone is over it).
 * Every path first runs WARM_RUNS (20) unmeasured 10-step chains and fan-outs, and SHAPE_WARM_RUNS (3) unmeasured
 * 100-wide runs and concurrent batches before those shapes are measured.
 * Printed first as INFO (no goal): this machine's cost of waking up for a PostgreSQL round trip, `SELECT 1`
 * back to back against after 10 ms idle (a chain step's pace); an API step makes one such round trip (its
 * statement) that a no-op raw step does not, so the chain's ratio moves with it from machine to machine.
 * Run: npm run -s bench -- dag   (ROUNDS=8, WIDE_ROUNDS=5 by default; BENCH_BREAKDOWN=1 adds, per shape,
 * where the time went according to the workflow histories)
 */
import type { Client } from '@temporalio/client';
import { sql } from 'slonik';
import type { Db } from '../activities/store/db';
import { randomToken } from '../activities/store/ids';
import { createTenant } from '../activities/store/keys';
import { createTask } from '../activities/store/tasks';
import { rawSaveActivities } from './dag-save-activity';
import {
  addHistoryPhases,
  cpuPer,
  cpuSnapshot,
  fmt,
  percentile,
  printPhases,
  startBenchStack,
  wallMs,
  type CpuSnapshot,
  type Phases,
} from './helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const WIDE_ROUNDS = Number(process.env.WIDE_ROUNDS ?? 5);
/** Unmeasured runs of each path and 10-step shape before the measured ones (WARM_RUNS). */
const WARM_RUNS = Number(process.env.WARM_RUNS ?? 20);
/** Unmeasured runs of the 100-wide shape, and unmeasured batches of the concurrent shape, per path (when WARM_RUNS > 0). */
const SHAPE_WARM_RUNS = Number(process.env.SHAPE_WARM_RUNS ?? 3);
const N = 10;
const WIDE = 100;
const CONCURRENT = 10;

/** Goals (issue 18): ratios are API p50 / raw p50 of the same run; throughput is API / raw. */
const GOALS = { chain: 1.1, fan: 1.25, wide: 1.25, stepOverheadMs: 5, throughput: 0.8 };
const BREAKDOWN = process.env.BENCH_BREAKDOWN === '1';

/**
 * What raw+save (the no-op workflow plus only the save's own writes, no platform) reads against raw, and whether
 * that alone is over the shape's goal. For the chain, whose steps cannot share a statement, no implementation that
 * runs a save step's writes in its activity (as the baseline runs its activities) can then meet the goal on this
 * machine; parallel steps can share statements and beat raw+save by a little.
 */
function floorNote(rawSaveOverRaw: number, goal: number, higherIsBetter = false): string {
  const over = higherIsBetter ? rawSaveOverRaw < goal : rawSaveOverRaw > goal;
  const x = higherIsBetter ? rawSaveOverRaw.toFixed(2) : `${rawSaveOverRaw.toFixed(2)}x`;
  return `; raw+save/raw ${x}${over ? ', over the goal with no platform at all' : ''}`;
}

/** The last measured call of each path, for the history breakdown. */
let lastCall: { workflowId: string; start: number; end: number } | undefined;

type Shape = 'chain' | 'fan';

function stepsFor(shape: Shape, n: number) {
  const save = (id: string, deps: string[]) => ({
    id,
    title: id,
    action: 'save',
    args: { content: 'x' },
    depends_on: deps,
  });
  if (shape === 'chain') return Array.from({ length: n }, (_, i) => save(`s${i}`, i ? [`s${i - 1}`] : []));
  const fan = Array.from({ length: n }, (_, i) => save(`s${i}`, []));
  return [
    ...fan,
    save(
      'join',
      fan.map((s) => s.id),
    ),
  ];
}

/** Creates and runs a task through the API, reading the SSE stream to `done`. Returns ms. */
async function viaApi(url: string, key: string, shape: Shape, n: number): Promise<number> {
  const started = performance.now();
  const start = wallMs();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const task = (await (
    await fetch(`${url}/v1/tasks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: shape, steps: stepsFor(shape, n) }),
    })
  ).json()) as { id: string };
  const res = await fetch(`${url}/v1/tasks/${task.id}/execute`, {
    method: 'POST',
    headers: { ...headers, accept: 'text/event-stream' },
  });
  const text = await res.text(); // the server ends the stream after the `done` event
  if (!text.includes('"done":true') || !text.includes('"status":"completed"'))
    throw new Error(`run did not complete: ${text.slice(-300)}`);
  lastCall = { workflowId: `task-${task.id}`, start, end: wallMs() };
  return performance.now() - started;
}

/** The tenant and task the raw+save path writes into (set in main). */
let rawSaveTarget: { tenantId: string; taskId: string } | undefined;

async function viaRaw(client: Client, taskQueue: string, shape: Shape, n: number, save = false): Promise<number> {
  const started = performance.now();
  const start = wallMs();
  const workflowId = `raw-${randomToken(10)}`;
  await client.workflow.execute('rawDagWorkflow', {
    taskQueue,
    workflowId,
    args: [{ shape, n, ...(save ? { save: rawSaveTarget } : {}) }],
  });
  lastCall = { workflowId, start, end: wallMs() };
  return performance.now() - started;
}

/**
 * p50 of `SELECT 1` through the pool, back to back and after `idleMs` of idle each: the second pays what
 * the machine charges to wake the database backend and this process for one round trip.
 */
async function roundTripFloor(db: Db, idleMs: number): Promise<{ hot: number; idle: number }> {
  const one = async () => {
    const t = performance.now();
    await db.query(sql.unsafe`SELECT 1`);
    return performance.now() - t;
  };
  const hot: number[] = [];
  const idle: number[] = [];
  for (let i = 0; i < 200; i++) hot.push(await one());
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, idleMs));
    idle.push(await one());
  }
  return { hot: percentile(hot, 50), idle: percentile(idle, 50) };
}

const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

async function main(): Promise<void> {
  const stack = await startBenchStack({
    workflowsPath: require.resolve('./dag-raw-workflow'),
    extraActivities: rawSaveActivities,
  });
  const { app, client, taskQueue, close } = stack;
  const failures: string[] = [];
  const check = (name: string, ok: boolean, line: string) => {
    console.log(`${verdict(ok)}  ${line}`);
    if (!ok) failures.push(name);
  };
  try {
    const key = await app.key(['runtime:records']);
    const rawTenant = await createTenant(app.db, { name: 'bench-raw-save' });
    const rawTask = await createTask(app.db, { tenantId: rawTenant, body: { title: 'raw+save baseline' } });
    rawSaveTarget = { tenantId: rawTenant, taskId: rawTask.id };
    const info = (line: string) => console.log(`INFO  ${line}`);
    // Warm-up, not measured: WARM_RUNS of each path and shape, so every path is measured at its steady
    // state rather than while V8 still compiles its code (the API path runs far more of it than the raw one).
    for (let i = 0; i < WARM_RUNS; i++)
      for (const shape of ['chain', 'fan'] as const) {
        await viaApi(app.url, key, shape, N);
        await viaRaw(client, taskQueue, shape, N);
        await viaRaw(client, taskQueue, shape, N, true);
      }
    console.log(`task DAG benchmark: API (SSE to done) vs raw workflow over no-op activities, interleaved, same run`);
    const floor = await roundTripFloor(app.db, 10);
    info(
      `PostgreSQL round trip (SELECT 1) p50: back to back ${fmt(floor.hot)} ms, after 10 ms idle ${fmt(floor.idle)} ms ` +
        `(this machine's wake-up cost; each API step's statement pays the second)`,
    );
    /** The history of the call just made, into `into` (when BENCH_BREAKDOWN=1; not timed). */
    const phasesOf = async (into: Phases) => {
      if (!BREAKDOWN || !lastCall) return;
      const { workflowId, start, end } = lastCall;
      await client.workflow.getHandle(workflowId).result(); // an API run's `done` event comes before the workflow closes
      await addHistoryPhases(client, workflowId, into, [{ start, end }]);
    };
    for (const shape of ['chain', 'fan'] as const) {
      const api: number[] = [];
      const raw: number[] = [];
      const rawSave: number[] = [];
      const phases = { API: {} as Phases, raw: {} as Phases };
      for (let i = 0; i < ROUNDS; i++) {
        api.push(await viaApi(app.url, key, shape, N));
        await phasesOf(phases.API);
        raw.push(await viaRaw(client, taskQueue, shape, N));
        await phasesOf(phases.raw);
        rawSave.push(await viaRaw(client, taskQueue, shape, N, true));
      }
      if (BREAKDOWN) printPhases(phases);
      const a50 = percentile(api, 50);
      const r50 = percentile(raw, 50);
      const steps = shape === 'chain' ? N : N + 1;
      const ratio = a50 / r50;
      const goal = shape === 'chain' ? GOALS.chain : GOALS.fan;
      check(
        shape,
        ratio <= goal,
        `${shape === 'chain' ? '10-step chain ' : '10-wide fan-out'} (${ROUNDS} rounds) raw p50 ${fmt(r50)} ms p90 ${fmt(percentile(raw, 90))} ms | ` +
          `API p50 ${fmt(a50)} ms p90 ${fmt(percentile(api, 90))} ms | ratio ${ratio.toFixed(2)}x (goal <= ${goal}x) ` +
          `(+${fmt((a50 - r50) / steps)} ms per step)`,
      );
      const s50 = percentile(rawSave, 50);
      info(
        `${shape === 'chain' ? '10-step chain ' : '10-wide fan-out'} raw+save p50 ${fmt(s50)} ms | API/raw+save ${(a50 / s50).toFixed(2)}x ` +
          `(+${fmt((a50 - s50) / steps)} ms per step of bookkeeping; the save's own writes ${fmt((s50 - r50) / steps)} ms per step` +
          `${floorNote(s50 / r50, goal)})`,
      );
      if (shape === 'chain') {
        // Per-step overhead: paired difference of each round, spread over the chain's steps (p50 over rounds).
        const perStep = percentile(
          api.map((a, i) => (a - raw[i]) / N),
          50,
        );
        check(
          'step-overhead',
          perStep <= GOALS.stepOverheadMs,
          `per-step overhead (chain, paired rounds) p50 ${fmt(perStep)} ms (goal <= ${GOALS.stepOverheadMs} ms)`,
        );
      }
    }

    const wideApi: number[] = [];
    const wideRaw: number[] = [];
    const wideRawSave: number[] = [];
    const widePhases = { API: {} as Phases, raw: {} as Phases };
    // Unmeasured 100-wide runs of each path: their batches take code paths the 10-step shapes do not, and V8
    // still optimizes them for a few runs (--trace-opt: the API path compiled 35-150 ms of code per run in
    // its 2nd to 4th 100-wide run, ~10 ms from the 5th on).
    for (let i = 0; i < (WARM_RUNS > 0 ? SHAPE_WARM_RUNS : 0); i++) {
      await viaApi(app.url, key, 'fan', WIDE);
      await viaRaw(client, taskQueue, 'fan', WIDE);
      await viaRaw(client, taskQueue, 'fan', WIDE, true);
    }
    for (let i = 0; i < WIDE_ROUNDS; i++) {
      wideApi.push(await viaApi(app.url, key, 'fan', WIDE));
      await phasesOf(widePhases.API);
      wideRaw.push(await viaRaw(client, taskQueue, 'fan', WIDE));
      await phasesOf(widePhases.raw);
      wideRawSave.push(await viaRaw(client, taskQueue, 'fan', WIDE, true));
    }
    if (BREAKDOWN) printPhases(widePhases);
    const wRatio = percentile(wideApi, 50) / percentile(wideRaw, 50);
    check(
      'wide',
      wRatio <= GOALS.wide,
      `100-wide fan-out/fan-in (${WIDE_ROUNDS} rounds) raw p50 ${fmt(percentile(wideRaw, 50))} ms | API p50 ${fmt(percentile(wideApi, 50))} ms | ` +
        `ratio ${wRatio.toFixed(2)}x (goal <= ${GOALS.wide}x, as fan-out)`,
    );
    info(
      `100-wide fan-out/fan-in raw+save p50 ${fmt(percentile(wideRawSave, 50))} ms | ` +
        `API/raw+save ${(percentile(wideApi, 50) / percentile(wideRawSave, 50)).toFixed(2)}x` +
        floorNote(percentile(wideRawSave, 50) / percentile(wideRaw, 50), GOALS.wide),
    );

    // 10 runs at once, each a 10-wide fan-out: steps completed per second of wall time.
    const stepsPerBatch = CONCURRENT * (N + 1);
    const apiRate: number[] = [];
    const rawRate: number[] = [];
    const rawSaveRate: number[] = [];
    /** BENCH_BREAKDOWN=1: CPU and transactions per step of each path (readings outside the timed batches). */
    const cpu: Record<'API' | 'raw' | 'raw+save', CpuSnapshot[]> = { API: [], raw: [], 'raw+save': [] };
    const reading = async (into: CpuSnapshot[], batch: () => Promise<unknown>) => {
      const before = BREAKDOWN ? await cpuSnapshot(stack) : undefined;
      const t = performance.now();
      await batch();
      const rate = stepsPerBatch / ((performance.now() - t) / 1000);
      if (before) into.push(cpuPer(before, await cpuSnapshot(stack, true), stepsPerBatch));
      return rate;
    };
    // Unmeasured concurrent batches of each path, for the same reason: ten runs at once make bigger step
    // batches and interleave differently (--trace-opt: ~200 ms of compiled code in the API path's first
    // concurrent batch after sequential warm-up runs, still ~100 ms in its 3rd to 5th).
    const concurrentRuns = [
      () => viaApi(app.url, key, 'fan', N),
      () => viaRaw(client, taskQueue, 'fan', N),
      () => viaRaw(client, taskQueue, 'fan', N, true),
    ];
    for (let i = 0; i < (WARM_RUNS > 0 ? SHAPE_WARM_RUNS : 0); i++)
      for (const run of concurrentRuns) await Promise.all(Array.from({ length: CONCURRENT }, run));
    for (let i = 0; i < WIDE_ROUNDS; i++) {
      apiRate.push(
        await reading(cpu.API, () =>
          Promise.all(Array.from({ length: CONCURRENT }, () => viaApi(app.url, key, 'fan', N))),
        ),
      );
      rawRate.push(
        await reading(cpu.raw, () =>
          Promise.all(Array.from({ length: CONCURRENT }, () => viaRaw(client, taskQueue, 'fan', N))),
        ),
      );
      rawSaveRate.push(
        await reading(cpu['raw+save'], () =>
          Promise.all(Array.from({ length: CONCURRENT }, () => viaRaw(client, taskQueue, 'fan', N, true))),
        ),
      );
    }
    if (BREAKDOWN) {
      const med = (xs: CpuSnapshot[], k: keyof CpuSnapshot) =>
        fmt(
          percentile(
            xs.map((x) => x[k]),
            50,
          ),
        );
      for (const path of ['API', 'raw', 'raw+save'] as const)
        console.log(
          `  10 concurrent, per step (p50 of ${cpu[path].length} batches), ${path}: CPU ms bench process ${med(cpu[path], 'bench')}, ` +
            `PostgreSQL ${med(cpu[path], 'pg')}, Temporal ${med(cpu[path], 'temporal')}; transactions ${med(cpu[path], 'xacts')}`,
        );
    }
    const tRatio = percentile(apiRate, 50) / percentile(rawRate, 50);
    check(
      'throughput',
      tRatio >= GOALS.throughput,
      `10 concurrent 10-wide runs (${WIDE_ROUNDS} rounds) raw p50 ${fmt(percentile(rawRate, 50))} steps/s | API p50 ${fmt(percentile(apiRate, 50))} steps/s | ` +
        `API/raw ${tRatio.toFixed(2)} (goal >= ${GOALS.throughput})`,
    );
    info(
      `10 concurrent 10-wide runs raw+save p50 ${fmt(percentile(rawSaveRate, 50))} steps/s | ` +
        `API/raw+save ${(percentile(apiRate, 50) / percentile(rawSaveRate, 50)).toFixed(2)}` +
        floorNote(percentile(rawSaveRate, 50) / percentile(rawRate, 50), GOALS.throughput, true),
    );
  } finally {
    await close();
  }
  console.log(failures.length ? `FAIL: ${failures.join(', ')}` : 'PASS: all goals met');
  if (failures.length) process.exitCode = 1;
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
