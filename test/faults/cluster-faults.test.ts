/**
 * Fault injection against a small cluster: 2 API processes behind the round-robin front and 2 worker processes,
 * one PostgreSQL database, one Temporal dev server of this test's own (with a database file, so it can be
 * restarted). A mixed workload (task DAG runs followed over SSE, goals, chat) runs while the test kill -9s an
 * API process, kill -9s a worker mid-step, restarts Temporal and (where the test owns the machine: CI, or
 * SVC_FAULTS_PG_RESTART=1) PostgreSQL. A checker then compares what clients were told with what the database
 * holds and what the outside world (fake model upstream, webhook receiver) saw. Loops are bounded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDb, type Db } from '../../activities/store/db';
import { createTenant, mintKey } from '../../activities/store/keys';
import { roundRobinFront } from '../../workers/cluster';
import { findOrBuildTemporalCli, freePort, startDevServer, type DevServer } from '../../workers/temporal-dev';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { freshDatabase, testEnv } from '../helpers/harness';
import { startReceiver, type Receiver } from '../tasks/receiver';
import { openStream, type SseEvent } from '../tasks/sse-client';
import { apiProc, workerProc, type Proc } from './processes';

jest.setTimeout(400_000);

const PG_RESTART = process.env.CI === 'true' || process.env.SVC_FAULTS_PG_RESTART === '1';
const TASKS = 6;
const GOALS = 3;
const STEPS = ['a', 'b', 'c', 'd'];
const log = pino({ level: 'silent' });

let database: { url: string; drop(): Promise<void> };
let db: Db;
let fake: FakeOpenAI;
let rx: Receiver;
let temporal: DevServer;
let temporalDir: string;
let temporalPort: number;
let cli: string;
let front: http.Server;
let base: string;
let key: string;
const apis: Proc[] = [];
const workers: Proc[] = [];

async function startTemporal(): Promise<DevServer> {
  return startDevServer({
    cli,
    port: temporalPort,
    namespace: 'default',
    dbFile: path.join(temporalDir, 'temporal.db'),
    log,
  });
}

beforeAll(async () => {
  const found = await findOrBuildTemporalCli({ log });
  if (found.path === null) throw new Error(`no Temporal CLI: ${found.attempts.join('; ')}`);
  cli = found.path;
  temporalDir = mkdtempSync(path.join(os.tmpdir(), 'svc-faults-'));
  temporalPort = await freePort();
  temporal = await startTemporal();
  database = await freshDatabase({ prefix: 'svc_test' });
  db = await createDb({ url: database.url, maxConnections: 2 });
  key = (
    await mintKey(db, {
      tenantId: await createTenant(db),
      kind: 'runtime',
      scopes: ['runtime:chat', 'runtime:records'],
    })
  ).apiKey;
  fake = await startFakeOpenAI();
  fake.setDefault({ reply: 'ok from the model', delayMs: 300 });
  rx = await startReceiver();
  const env = {
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'faults',
    OPENAI_BASE_URL: fake.url,
    SVC_ALLOW_PRIVATE_FETCH: 'true',
    SVC_LOG_LEVEL: 'warn',
    SVC_WORKER_SHUTDOWN_GRACE_MS: '0',
    WORKFLOW_BUNDLE_PATH: testEnv().bundlePath,
  };
  const ports = [await freePort(), await freePort()];
  apis.push(apiProc('api-1', ports[0], env), apiProc('api-2', ports[1], env));
  workers.push(workerProc('worker-1', env), workerProc('worker-2', env));
  for (const p of [...apis, ...workers]) await p.start();
  front = roundRobinFront(ports);
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const p of [...apis, ...workers]) await p.stop().catch(() => {});
  front?.closeAllConnections();
  front?.close();
  await temporal?.stop();
  await db?.end();
  await database?.drop();
  await fake?.close();
  await rx?.close();
  if (temporalDir) rmSync(temporalDir, { recursive: true, force: true });
});

interface Outcome {
  status: number;
  body: any;
}

/** A client as a careful user writes one: retries network errors, 502/503 (honouring Retry-After) with the same Idempotency-Key. */
async function call(method: string, p: string, body: unknown, stats: Stats, idem?: string): Promise<Outcome> {
  for (let attempt = 0; attempt < 60; attempt++) {
    stats.requests++;
    try {
      const r = await fetch(base + p, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(idem ? { 'idempotency-key': idem } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status >= 500) stats.byStatus[r.status] = (stats.byStatus[r.status] ?? 0) + 1;
      if (r.status === 502 || r.status === 503 || r.status === 504) {
        await new Promise((res) => setTimeout(res, Math.min(2000, Number(r.headers.get('retry-after') ?? 0.5) * 1000)));
        continue;
      }
      return { status: r.status, body: text ? JSON.parse(text) : undefined };
    } catch {
      stats.networkErrors++;
      await new Promise((res) => setTimeout(res, 500));
    }
  }
  throw new Error(`${method} ${p}: no answer after 60 attempts`);
}

interface Stats {
  requests: number;
  networkErrors: number;
  byStatus: Record<number, number>;
}

/** Follows a task run over SSE through the front, reconnecting with Last-Event-ID until the final event. */
async function follow(taskId: string, stats: Stats): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (let attempt = 0; attempt < 120; attempt++) {
    const last = events.at(-1)?.id;
    try {
      const r = await openStream(`${base}/v1/tasks/${taskId}/execute`, {
        method: 'GET',
        key,
        lastEventId: last,
        timeoutMs: 120_000,
        onEvent: (e) => e.data?.done === true,
      });
      if (r.status >= 500) stats.byStatus[r.status] = (stats.byStatus[r.status] ?? 0) + 1;
      events.push(...r.events);
    } catch {
      stats.networkErrors++;
    }
    if (events.at(-1)?.data?.done) return events;
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error(`task ${taskId}: no final event`);
}

test('kill -9 an API and a worker, restart Temporal (and PostgreSQL): nothing lost, nothing duplicated, no 500', async () => {
  const stats: Stats = { requests: 0, networkErrors: 0, byStatus: {} };
  const started = Date.now();
  // Workload: task DAGs (webhooks that take a while, so some are in flight at every fault), goals, chat.
  for (let i = 0; i < TASKS; i++) for (const s of STEPS) rx.route(`/f/${i}/${s}`, { delayMs: 1500 });
  const taskIds: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    const hook = (s: string, deps: string[]) => ({
      id: s,
      title: s,
      action: 'webhook',
      args: { url: `${rx.url}/f/${i}/${s}`, secret: 'x' },
      depends_on: deps,
    });
    const r = await call(
      'POST',
      '/v1/tasks',
      { title: `t${i}`, steps: STEPS.map((s, j) => hook(s, j ? [STEPS[j - 1]] : [])) },
      stats,
    );
    expect(r.status).toBe(201);
    taskIds.push(r.body.id);
  }
  // Runs start two seconds apart, so work is in flight at every fault.
  const runs = taskIds.map(async (id, i) => {
    await new Promise((res) => setTimeout(res, i * 2000));
    const r = await call('POST', `/v1/tasks/${id}/execute`, undefined, stats, `run-${i}`);
    if (r.status >= 300) {
      const errors = apis
        .map((a) =>
          a
            .output()
            .split('\n')
            .filter((l) => l.includes('"level":50'))
            .join('\n'),
        )
        .join('\n');
      throw new Error(`execute ${id}: ${r.status} ${JSON.stringify(r.body)}\n${errors.slice(-3000)}`);
    }
    return follow(id, stats);
  });
  const goals = Array.from({ length: GOALS }, (_, i) =>
    call(
      'POST',
      '/v1/goals',
      {
        title: `g${i}`,
        steps: [
          { title: 's1', prompt: `goal ${i} step 1` },
          { title: 's2', prompt: `goal ${i} step 2` },
        ],
      },
      stats,
      `goal-${i}`,
    ),
  );
  const chats = (async () => {
    const answers: number[] = [];
    for (let i = 0; i < 12; i++) {
      answers.push(
        (
          await call(
            'POST',
            '/v1/chat/completions',
            { model: 'svc-oracle', messages: [{ role: 'user', content: `chat ${i}` }] },
            stats,
          )
        ).status,
      );
      await new Promise((res) => setTimeout(res, 400));
    }
    return answers;
  })();

  // Faults, one after another, each waited out.
  const recovery: Record<string, number> = {};
  const measure = async (name: string, fault: () => Promise<void>) => {
    const t0 = Date.now();
    await fault();
    for (let i = 0; i < 300; i++) {
      const ok = await fetch(`${base}/v1/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    recovery[name] = Date.now() - t0;
  };
  await Promise.race([rx.waitFor(() => rx.inFlight > 0, 60_000), Promise.all(runs)]).catch(async (err: Error) => {
    const state = await call('GET', `/v1/tasks/${taskIds[0]}/execute`, undefined, stats);
    throw new Error(
      `${err.message}; first task: ${JSON.stringify(state.body)}; worker-1: ${workers[0].output().slice(-1500)}`,
    );
  });
  await measure('kill -9 api-1', async () => {
    await apis[0].kill9();
    await new Promise((res) => setTimeout(res, 1000));
    await apis[0].start();
  });
  await rx.waitFor(() => rx.inFlight > 0, 30_000).catch(() => {});
  const killedAt = Date.now();
  await measure('kill -9 worker-1', async () => {
    await workers[0].kill9();
    await new Promise((res) => setTimeout(res, 1000));
    await workers[0].start();
  });
  await measure('restart Temporal', async () => {
    await temporal.stop();
    temporal = await startTemporal();
  });
  if (PG_RESTART) {
    await measure('restart PostgreSQL', async () => {
      const version = readdirSync('/etc/postgresql')[0];
      const r = spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart'], {
        encoding: 'utf8',
      });
      expect(r.status).toBe(0);
    });
  }

  const streams = await Promise.all(runs);
  const goalIds = (await Promise.all(goals)).map((g) => g.body.id as string);
  const chatStatuses = await chats;
  const goalStates = await Promise.all(
    goalIds.map(async (id) => {
      for (let i = 0; i < 300; i++) {
        const g = await call('GET', `/v1/goals/${id}`, undefined, stats);
        if (['completed', 'failed', 'cancelled'].includes(g.body.status)) return g.body;
        await new Promise((res) => setTimeout(res, 300));
      }
      throw new Error(`goal ${id} did not finish`);
    }),
  );

  // Checker: what clients were told against what the database and the outside world hold.
  let lost = 0;
  let duplicated = 0;
  for (const [i, events] of streams.entries()) {
    const ids = events.map((e) => Number(e.id));
    duplicated += ids.length - new Set(ids).size;
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const final = events.at(-1)!.data;
    const steps = final.task.steps.map((s: { status: string }) => s.status);
    if (steps.some((s: string) => s !== 'completed')) lost++;
    for (const s of STEPS) {
      const hits = rx.on(`/f/${i}/${s}`);
      // A webhook runs again only when its first call was cut off by the worker kill (at-least-once delivery).
      const answered = hits.filter((hh) => !hh.closedEarly);
      if (answered.length > 1 && !(hits[0].startedAt <= killedAt && (hits[0].endedAt ?? Infinity) >= killedAt - 1000))
        duplicated++;
      if (hits.length === 0) lost++;
    }
  }
  const goalsDone = goalStates.filter((g) => g.status === 'completed').length;
  const rows = await db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM tasks`);
  const fiveHundreds = stats.byStatus[500] ?? 0;
  const summary = {
    operations: stats.requests,
    acknowledged: TASKS + GOALS + chatStatuses.filter((s) => s === 200).length,
    lost,
    duplicated,
    '5xx': stats.byStatus,
    network_errors_retried: stats.networkErrors,
    recovery_ms: recovery,
    wall_s: Math.round((Date.now() - started) / 1000),
  };
  console.log(`fault checker: ${JSON.stringify(summary)}`);
  expect(lost).toBe(0);
  expect(duplicated).toBe(0);
  expect(fiveHundreds).toBe(0);
  expect(goalsDone).toBe(GOALS);
  expect(chatStatuses.every((s) => s === 200)).toBe(true);
  expect(rows).toBe(TASKS);
});
