import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ProcessPool, ProcessTaskError } from '../../activities/web/process-pool';
import { processAlive } from '../helpers/processes';

const entry = path.join(__dirname, 'fixtures/pool-child.ts');
type Reply = { pid: number; kind: string; length?: number; last?: number };
const pools: ProcessPool<Reply>[] = [];
function pool(o: Partial<ConstructorParameters<typeof ProcessPool>[0]> = {}) {
  const p = new ProcessPool<Reply>({ entry, memoryMb: 0, size: 1, maxQueue: 4, idleMs: 60_000, ...o });
  pools.push(p);
  return p;
}
const alive = processAlive;
afterAll(() => {
  for (const p of pools) for (const w of (p as any).workers) w.child.kill('SIGKILL');
});

async function failure(p: Promise<unknown>): Promise<ProcessTaskError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProcessTaskError);
  return err as ProcessTaskError;
}

test('bytes cross as bytes; one process serves tasks one after another', async () => {
  const p = pool();
  const a = await p.run({ op: 'echo', bytes: new Uint8Array([1, 2, 250]) }, 10_000);
  expect(a).toMatchObject({ kind: '[object Uint8Array]', length: 3, last: 250 });
  const b = await p.run({ op: 'echo', bytes: new Uint8Array(5 * 1024 * 1024).fill(7) }, 10_000);
  expect(b).toMatchObject({ kind: '[object Uint8Array]', length: 5 * 1024 * 1024, last: 7, pid: a.pid });
});

test('a task past its deadline fails and its process is killed; the next task gets a new process', async () => {
  const p = pool();
  const first = await p.run({ op: 'echo', bytes: new Uint8Array(1) }, 10_000);
  const err = await failure(p.run({ op: 'sleep', ms: 60_000 }, 300));
  expect(err.reason).toBe('timeout');
  const next = await p.run({ op: 'echo', bytes: new Uint8Array(1) }, 10_000);
  expect(next.pid).not.toBe(first.pid);
  expect(alive(first.pid)).toBe(false);
});

test('a process that dies under a task fails that task only, saying how it ended; queued tasks carry on', async () => {
  const p = pool();
  const dying = p.run({ op: 'exit', code: 3 }, 10_000);
  const queued = p.run({ op: 'echo', bytes: new Uint8Array(2) }, 10_000);
  const err = await failure(dying);
  expect(err.reason).toBe('crashed');
  expect(err.message).toMatch(/^the process ended \(code 3, signal null\)/);
  expect(await queued).toMatchObject({ length: 2 });
});

test('a process that cannot load its module fails the task with its last words', async () => {
  const p = pool({ entry: path.join(__dirname, 'fixtures/no-such-child.js') });
  const err = await failure(p.run({ op: 'echo', bytes: new Uint8Array(1) }, 10_000));
  expect(err.reason).toBe('crashed');
  expect(err.message).toMatch(/^the process ended \(code 1, signal null\): .*Cannot find module/);
});

test('a task waiting for a process fails at its deadline, counted from when it was given; the busy one goes on', async () => {
  const p = pool({ maxQueue: 4 });
  const busy = p.run({ op: 'sleep', ms: 600 }, 10_000);
  const started = Date.now();
  const err = await failure(p.run({ op: 'echo', bytes: new Uint8Array(1) }, 200));
  expect(err.reason).toBe('timeout');
  expect(Date.now() - started).toBeLessThan(550);
  await expect(busy).resolves.toMatchObject({ kind: '[object Undefined]' });
  // The queue holds nothing stale: the next task runs on the same process.
  const next = await p.run({ op: 'echo', bytes: new Uint8Array(3) }, 10_000);
  expect(next.length).toBe(3);
});

test('past the queue limit a task is refused at once', async () => {
  const p = pool({ maxQueue: 1 });
  const busy = p.run({ op: 'sleep', ms: 500 }, 10_000);
  const waiting = p.run({ op: 'echo', bytes: new Uint8Array(1) }, 10_000);
  const err = await failure(p.run({ op: 'echo', bytes: new Uint8Array(1) }, 10_000));
  expect(err.reason).toBe('queue_full');
  await expect(busy).resolves.toMatchObject({ kind: '[object Undefined]' });
  await expect(waiting).resolves.toMatchObject({ length: 1 });
});

test('under a memory cap, a process whose heap cannot grow ends with out_of_memory', async () => {
  const p = pool({ memoryMb: 1024 });
  const small = await p.run({ op: 'grow', mb: 16 }, 30_000);
  expect(small.pid).toBeGreaterThan(0);
  const err = await failure(p.run({ op: 'grow', mb: 4096 }, 60_000));
  expect(err.reason).toBe('out_of_memory');
  expect(alive(small.pid)).toBe(false);
});

test('an idle process does not keep its parent running', () => {
  // A parent that ran one task and has nothing left to do exits at once, although its pool's idle time is a minute.
  const script = `
    const { ProcessPool } = require(${JSON.stringify(path.join(__dirname, '../../activities/web/process-pool.ts'))});
    const p = new ProcessPool({ entry: ${JSON.stringify(entry)}, memoryMb: 0, size: 1, maxQueue: 1, idleMs: 60000 });
    p.run({ op: 'echo', bytes: new Uint8Array(1) }, 10000).then((r) => console.log('replied', r.length));
  `;
  const started = Date.now();
  const r = spawnSync(process.execPath, ['-r', require.resolve('../../bin/ts-register.js'), '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.stdout.trim()).toBe('replied 1');
  expect(r.status).toBe(0);
  expect(Date.now() - started).toBeLessThan(20_000);
});
