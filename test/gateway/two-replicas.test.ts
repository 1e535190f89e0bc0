import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { setLimits } from '../../activities/store/rate-limits';
import { freePort } from '../../workers/temporal-dev';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { testEnv, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let fake: FakeOpenAI;
let h: Harness;
withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    resetEach: { reply: 'replica answer', usage: { prompt_tokens: 5, completion_tokens: 5 } },
  },
  (up) => ({ fake, h } = up),
);

const ROOT = path.resolve(__dirname, '../..');
interface Replica {
  url: string;
  child: ChildProcess;
}
const replicas: Replica[] = [];

/** The real API entry (workers/api.ts) in its own process, on the harness database. */
async function startReplica(): Promise<Replica> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'test/helpers/ts-register.js'), path.join(ROOT, 'workers/api.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: h.dbUrl,
        TEMPORAL_ADDRESS: testEnv().temporalAddress,
        OPENAI_BASE_URL: fake.url,
        SVC_LOG_LEVEL: 'silent',
        SVC_LIMIT_SYNC_MS: '50',
        // Ten-minute "minutes": no window turns over during the test.
        SVC_LIMIT_MINUTE_MS: '600000',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}: ${stderr.slice(-2000)}`))),
  );
  exited.catch(() => undefined);
  await Promise.race([
    pollUntil(
      () =>
        fetch(`${url}/v1/health`).then(
          (r) => r.status,
          () => 0,
        ),
      (s) => s === 200,
      60_000,
    ),
    exited,
  ]);
  const r = { url, child };
  replicas.push(r);
  return r;
}

afterAll(async () => {
  await Promise.all(
    replicas.map(
      (r) =>
        new Promise<void>((resolve) => {
          if (r.child.exitCode !== null) return resolve();
          r.child.once('exit', () => resolve());
          r.child.kill('SIGTERM');
        }),
    ),
  );
});

let A: Replica;
let B: Replica;
beforeAll(async () => {
  [A, B] = await Promise.all([startReplica(), startReplica()]);
}, 120_000);

async function call(r: Replica, method: string, p: string, key: string, body?: unknown) {
  const res = await fetch(r.url + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any };
}
const chat = (r: Replica, key: string) =>
  call(r, 'POST', '/v1/mid/chat/completions', key, { model: 'mid', messages: [{ role: 'user', content: 'hi' }] });

test('a key revoked on one replica is refused there at once and on the other replica through NOTIFY', async () => {
  const k = await h.key(['runtime:chat']);
  for (const r of [A, B, A, B]) expect((await call(r, 'GET', '/v1/key', k.apiKey)).status).toBe(200); // cached in both
  expect((await call(A, 'DELETE', '/v1/key', k.apiKey)).status).toBe(200);
  expect((await call(A, 'GET', '/v1/key', k.apiKey)).status).toBe(401);
  const t0 = Date.now();
  await pollUntil(
    () => call(B, 'GET', '/v1/key', k.apiKey),
    (r) => r.status === 401,
    10_000,
  );
  console.log(`revocation seen by the other replica after ${Date.now() - t0} ms`);
  expect((await chat(B, k.apiKey)).status).toBe(401);
});

test('requests per minute are shared: what one replica admitted counts on the other', async () => {
  const k = await h.key(['runtime:chat']);
  await setLimits(h.db, k.tenantId, k.keyId, { requests_per_minute: 4 });
  expect((await chat(A, k.apiKey)).status).toBe(200);
  expect((await chat(A, k.apiKey)).status).toBe(200);
  // Wait until A's batched counts reached PostgreSQL, and B has synced (B reads totals every 50 ms once it knows the key).
  const total = () =>
    h.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT coalesce(sum(requests), 0)::int8 AS n FROM rate_counters WHERE tenant_id = ${k.tenantId} AND scope = ${k.keyId} AND win = 'minute'`);
  await pollUntil(total, (n) => n === 2);
  const third = await chat(B, k.apiKey);
  expect(third.status).toBe(200);
  expect(third.headers.get('x-ratelimit-remaining-requests')).toBe('1');
  expect((await chat(B, k.apiKey)).status).toBe(200);
  const fifth = await chat(B, k.apiKey);
  expect(fifth.status).toBe(429);
  expect(fifth.headers.get('retry-after')).toMatch(/^\d+$/);
  // And A learns B's counts at its next sync.
  await pollUntil(
    () => chat(A, k.apiKey),
    (r) => r.status === 429,
    10_000,
  );
});

test('new feedback on one replica moves the cached persona signal on the other', async () => {
  const k = await h.key(['runtime:chat']);
  const ask = async (r: Replica) => {
    const res = await fetch(`${r.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.apiKey}`, 'content-type': 'application/json', 'X-Svc-Context': 'dev' },
      body: JSON.stringify({ model: 'svc-oracle', messages: [{ role: 'user', content: 'hi' }] }),
    });
    return ((await res.json()) as { meta: { sass_factor: number } }).meta.sass_factor;
  };
  const before = await ask(B);
  expect(await ask(B)).toBe(before); // served from B's cache now
  const fb = await fetch(`${A.url}/v1/chat/feedback`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.apiKey}`, 'content-type': 'application/json', 'X-Svc-Context': 'dev' },
    body: JSON.stringify({ prompt: 'p', response: 'r', sass: before > 0.5 ? 0 : 1 }),
  });
  expect(fb.status).toBe(200);
  await pollUntil(
    () => ask(B),
    (s) => s !== before,
    10_000,
  );
});

test("a profile saved on one replica reaches the other's cached chat prompt", async () => {
  const k = await h.key(['runtime:chat']);
  const promptOn = async (r: Replica) => {
    const res = await fetch(`${r.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.apiKey}`, 'content-type': 'application/json', 'X-Svc-Context': 'dev' },
      body: JSON.stringify({ model: 'svc-oracle', messages: [{ role: 'user', content: 'identity probe' }] }),
    });
    expect(res.status).toBe(200);
    const sent = fake.requests.filter((q) => JSON.stringify(q.body?.messages ?? []).includes('identity probe'));
    return JSON.stringify(sent[sent.length - 1].body.messages);
  };
  // The default profile, now cached on both replicas.
  expect(await promptOn(A)).not.toContain('Replica profile');
  expect(await promptOn(B)).not.toContain('Replica profile');
  const put = await fetch(`${A.url}/v1/sovereign/identity`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${k.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Replica profile', tone: 'warm' }),
  });
  expect(put.status).toBe(200);
  expect(await promptOn(A)).toContain('Replica profile'); // at once on the replica that saved it
  await pollUntil(
    () => promptOn(B),
    (p) => p.includes('Replica profile'),
    10_000,
  );
});
