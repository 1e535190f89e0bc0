/**
 * Load through 1 vs 2 API processes (`dist/workers/api.js` children on one PostgreSQL and one Temporal dev
 * server, behind the cluster's round-robin front in both cases): requests per second and p99 for chat (fake
 * upstream), task create and a structured-reasoning endpoint, with autocannon in this process. Prints the
 * 2-vs-1 scaling ratio and where the CPU went (per process), because on a 2-core machine the ratio is bounded
 * by the machine, not by the service.
 * Run: npm run -s bench -- load   (BENCH_SECONDS, BENCH_CONNECTIONS to change the load)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import { createDb } from '../activities/store/db';
import { createTenant, mintKey } from '../activities/store/keys';
import { startFakeOpenAI } from '../test/helpers/fake-openai';
import { freshDatabase } from '../test/helpers/harness';
import { roundRobinFront } from '../workers/cluster';
import { findOrBuildTemporalCli, freePort, startDevServer } from '../workers/temporal-dev';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const CLK_TCK = 100;

interface Scenario {
  name: string;
  path: string;
  body: unknown;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'chat (fake upstream)',
    path: '/v1/chat/completions',
    body: { model: 'svc-oracle', messages: [{ role: 'user', content: 'Say hello.' }] },
  },
  {
    name: 'task create',
    path: '/v1/tasks',
    body: { title: 'Load', steps: [{ title: 'a', action: 'save', args: { content: 'x' } }] },
  },
  {
    name: 'reasoning /quest/scaffold',
    path: '/v1/quest/scaffold',
    body: { goal: 'Ship the beta', notes: 'Two weeks', constraints: ['no weekends'] },
  },
];

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat. */
function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

async function startApi(env: NodeJS.ProcessEnv): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, '../workers/api.js')], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 120; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { port, child };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`API process on ${port} did not become healthy`);
}

async function run(url: string, key: string, s: Scenario, duration = SECONDS): Promise<autocannon.Result> {
  return autocannon({
    url: url + s.path,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(s.body),
    connections: CONNECTIONS,
    duration,
  });
}

async function main(): Promise<void> {
  const log = pino({ level: 'warn' });
  const cli = await findOrBuildTemporalCli({ log });
  if (cli.path === null) throw new Error(`no Temporal CLI: ${cli.attempts.join('; ')}`);
  const temporal = await startDevServer({ cli: cli.path, port: await freePort(), namespace: 'default', log });
  const database = await freshDatabase({ prefix: 'svc_bench' });
  const fake = await startFakeOpenAI();
  const db = await createDb({ url: database.url, maxConnections: 2 });
  const key = (
    await mintKey(db, {
      tenantId: await createTenant(db),
      kind: 'runtime',
      scopes: ['runtime:chat', 'runtime:records'],
    })
  ).apiKey;
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporal.address,
    OPENAI_BASE_URL: fake.url,
    SVC_LOG_LEVEL: 'warn',
    SVC_LOG_FORMAT: 'json',
  };
  const apis = [await startApi(env), await startApi(env)];
  console.log(
    `load: ${SECONDS} s per run, ${CONNECTIONS} connections, ${os.cpus().length} cores; autocannon and the fake upstream share this process`,
  );
  console.log(
    '| scenario | API processes | req/s | p50 ms | p99 ms | non-2xx | CPU: bench / api-1 / api-2 (cores busy) | whole machine (cores busy) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  const ratios: string[] = [];
  for (const s of SCENARIOS) {
    const rps: number[] = [];
    for (const n of [1, 2]) {
      const front: http.Server = roundRobinFront(apis.slice(0, n).map((a) => a.port));
      await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      await run(url, key, s, 1); // warm-up: connections, JIT, caches
      const before = [process.cpuUsage(), ...apis.map((a) => cpuSeconds(a.child.pid!))] as const;
      const machineBefore = machineJiffies();
      const started = performance.now();
      const r = await run(url, key, s);
      const wall = (performance.now() - started) / 1000;
      const bench = process.cpuUsage(before[0] as NodeJS.CpuUsage);
      const busy = [
        (bench.user + bench.system) / 1e6 / wall,
        ...apis.map((a, i) => (cpuSeconds(a.child.pid!) - (before[i + 1] as number)) / wall),
      ];
      const m = machineJiffies();
      const machineBusy = ((m.busy - machineBefore.busy) / (m.total - machineBefore.total)) * os.cpus().length;
      rps.push(r.requests.average);
      console.log(
        `| ${s.name} | ${n} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} | ${busy.map((b) => b.toFixed(2)).join(' / ')} | ${machineBusy.toFixed(2)} |`,
      );
      front.closeAllConnections();
      await new Promise<void>((r2) => front.close(() => r2()));
    }
    ratios.push(`${s.name}: ${(rps[1] / rps[0]).toFixed(2)}×`);
  }
  console.log(`\nscaling 2-vs-1 API processes: ${ratios.join(', ')}`);
  console.log(
    'On this machine both API processes, the load generator and the fake upstream share 2 cores: once the cores are\n' +
      'busy (the CPU column adds up to about 2), a second API process cannot add throughput; the ratio measures the\n' +
      'machine. On separate hosts each replica brings its own cores (replicas share nothing but PostgreSQL and Temporal).',
  );
  for (const a of apis) a.child.kill('SIGTERM');
  await Promise.all(
    apis.map((a) => new Promise((r) => (a.child.exitCode !== null ? r(null) : a.child.once('exit', r)))),
  );
  await db.end();
  await fake.close();
  await database.drop();
  await temporal.stop();
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
