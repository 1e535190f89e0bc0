import { sql } from 'slonik';
import { requestHashOf } from '../../api/idempotency';
import { IDEMPOTENCY_LEASE_SECONDS, IDEMPOTENCY_TTL_SECONDS } from '../../activities/store/idempotency';
import { tickUpdate } from '../../workflows/job-defs';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let fake: FakeOpenAI;
let h: Harness;
let key: string;
let tenantId: string;
withFakeUpstream({ worker: true, scopes: ['runtime:chat', 'runtime:records'] }, (up) => ({ fake, h, key } = up));
beforeAll(async () => {
  tenantId = (await h.req('GET', '/v1/key', { key })).body.tenant_id;
});
beforeEach(() => {
  fake.reset();
  fake.onRequest((r) => ({ reply: `out: ${String(r.body.messages.at(-1).content).split('\n')[0]}` }));
});

const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `S${i + 1}`, prompt: `Do step ${i + 1}.` }));
/** Model calls made for one goal (goals of earlier tests may still be finishing their steps). */
const chatsOf = (title: string) =>
  fake.chats.filter((c) => String(c.body.messages[0].content).includes(`of the goal "${title}"`)).length;
const post = (path: string, idemKey: string, body?: unknown) =>
  h.req('POST', path, { key, body, headers: { 'Idempotency-Key': idemKey } });

/** Makes the key's row look like a request that claimed it and died before storing its answer, `ageSeconds` ago. */
async function abandon(route: string, idemKey: string, ageSeconds: number) {
  await h.db.query(sql.unsafe`
    UPDATE idempotency_keys SET response = NULL, status = NULL, created_at = now() - make_interval(secs => ${ageSeconds})
    WHERE tenant_id = ${tenantId} AND route = ${route} AND key = ${idemKey}`);
}

test('a claim left without an answer is 409 within the lease, then taken over by a retry with the same body', async () => {
  const body = { title: 'Lost answer', steps: steps(1) };
  const first = await post('/v1/goals', 'lost-1', body);
  expect(first.status).toBe(200);
  // The API died between claim and stored answer.
  await abandon('POST /v1/goals', 'lost-1', 5);
  const inFlight = await post('/v1/goals', 'lost-1', body);
  expect(inFlight.status).toBe(409);
  expect(inFlight.body.error).toMatch(/still in progress/);
  // Past the lease: a retry takes the claim over, runs, and its answer is stored for the next retry.
  await abandon('POST /v1/goals', 'lost-1', IDEMPOTENCY_LEASE_SECONDS + 1);
  const different = await post('/v1/goals', 'lost-1', { ...body, title: 'Other body' });
  expect(different.status).toBe(409);
  expect(different.body.code).toBe('idempotency_conflict');
  const takeover = await post('/v1/goals', 'lost-1', body);
  expect(takeover.status).toBe(200);
  expect(takeover.body.title).toBe('Lost answer');
  const replay = await post('/v1/goals', 'lost-1', body);
  expect(replay.status).toBe(200);
  expect(replay.body.id).toBe(takeover.body.id);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
});

test('keys expire after 24 h: old rows are deleted on the next claim and the key is free again', async () => {
  const a = await post('/v1/goals', 'old-1', { title: 'Yesterday', steps: steps(1) });
  expect(a.status).toBe(200);
  await h.db.query(sql.unsafe`
    INSERT INTO idempotency_keys (tenant_id, route, key, request_hash, status, response, created_at)
    VALUES (${tenantId}, 'POST /v1/pad/dispatch', 'ancient', 'x', 200, '{}'::jsonb, now() - interval '30 days')`);
  await h.db.query(sql.unsafe`
    UPDATE idempotency_keys SET created_at = now() - make_interval(secs => ${IDEMPOTENCY_TTL_SECONDS + 60})
    WHERE tenant_id = ${tenantId} AND key = 'old-1'`);
  // Same key, another body: no longer a conflict, a new goal.
  const b = await post('/v1/goals', 'old-1', { title: 'Today', steps: steps(1) });
  expect(b.status).toBe(200);
  expect(b.body.id).not.toBe(a.body.id);
  const keys = await h.db.anyFirst(
    sql.unsafe`SELECT key FROM idempotency_keys WHERE tenant_id = ${tenantId} ORDER BY key`,
  );
  expect(keys).toContain('old-1');
  expect(keys).not.toContain('ancient');
});

test('a tick taken over after the API died re-sends the same update id: Temporal answers it, no second step runs', async () => {
  const goal = await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Lost tick', steps: steps(3) } });
  expect(goal.body.status).toBe('ready');
  const id = goal.body.id as string;
  const route = `POST /v1/sovereign/goals/${id}/tick`; // idempotent routes key by method and path
  // The dead API request had claimed the key and run its update; its answer never reached the database.
  await h.db.query(sql.unsafe`
    INSERT INTO idempotency_keys (tenant_id, route, key, request_hash) VALUES (${tenantId}, ${route}, 'tick-lost', ${requestHashOf({})})`);
  const ran = await h.client.workflow
    .getHandle(`sovereign-${id}`)
    .executeUpdate(tickUpdate, { updateId: 'tick-tick-lost' });
  expect(ran.stepIndex).toBe(1);
  expect(chatsOf('Lost tick')).toBe(1);

  const early = await post(`/v1/sovereign/goals/${id}/tick`, 'tick-lost');
  expect(early.status).toBe(409);
  await abandon(route, 'tick-lost', IDEMPOTENCY_LEASE_SECONDS + 1);
  const retried = await post(`/v1/sovereign/goals/${id}/tick`, 'tick-lost');
  expect(retried.status).toBe(200);
  expect(retried.body).toMatchObject({
    step_index: 1,
    last_step: { index: 0, title: 'S1', output: 'out: Do step 1.' },
  });
  expect(chatsOf('Lost tick')).toBe(1); // deduplicated by Temporal: step 2 did not run
  const again = await post(`/v1/sovereign/goals/${id}/tick`, 'tick-lost');
  expect(again.body.step_index).toBe(1);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  const next = await post(`/v1/sovereign/goals/${id}/tick`, 'tick-next');
  expect(next.body).toMatchObject({ step_index: 2, last_step: { title: 'S2' } });
  expect(chatsOf('Lost tick')).toBe(2);
});

test('idempotent creates: sovereign goals and swarm runs (same key and body → same job; other body → 409)', async () => {
  const sov = { title: 'Once sovereign', steps: steps(2) };
  const s1 = await post('/v1/sovereign/goals', 'sov-1', sov);
  const s2 = await post('/v1/sovereign/goals', 'sov-1', sov);
  expect([s1.status, s2.status]).toEqual([200, 200]);
  expect(s2.body.id).toBe(s1.body.id);
  // Byte for byte, keys in the same order (the answer was stored as jsonb, which reorders them).
  expect(s2.text).toBe(s1.text);
  expect(s2.headers.get('idempotent-replayed')).toBe('true');
  const s3 = await post('/v1/sovereign/goals', 'sov-1', { ...sov, title: 'Twice' });
  expect(s3.status).toBe(409);
  expect(s3.body.code).toBe('idempotency_conflict');
  expect(
    (await h.req('GET', '/v1/sovereign/goals', { key })).body.data.filter((g: any) => g.title === 'Once sovereign'),
  ).toHaveLength(1);

  const swarm = { operation: 'map', params: { prompt: 'Shout {{item}}', items: ['a', 'b'] } };
  const w1 = await post('/v1/swarm/run', 'swarm-1', swarm);
  const w2 = await post('/v1/swarm/run', 'swarm-1', swarm);
  expect([w1.status, w2.status]).toEqual([200, 200]);
  expect(w2.body.id).toBe(w1.body.id);
  expect(w2.text).toBe(w1.text);
  expect(w2.headers.get('idempotent-replayed')).toBe('true');
  const w3 = await post('/v1/swarm/run', 'swarm-1', { ...swarm, params: { ...swarm.params, items: ['c'] } });
  expect(w3.status).toBe(409);
  expect(w3.body.code).toBe('idempotency_conflict');
  const runs = await h.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM swarm_runs WHERE tenant_id = ${tenantId}`);
  expect(runs).toBe(1);
});

/** Workflow runs Temporal holds under one workflow id (a second job would be a second id, counted by the caller). */
async function runsOf(workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of h.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) n++;
  return n;
}

test('the crash window: a retry after the API died between workflow start and stored answer attaches to the same job', async () => {
  const cases = [
    { path: '/v1/goals', body: { title: 'Crash window goal', steps: steps(2) }, table: 'goals', wf: 'goal' },
    {
      path: '/v1/pad/dispatch',
      body: { agents: [{ name: 'crash-window', prompt: 'Do step 1.' }] },
      table: 'pad_sessions',
      wf: 'pad',
    },
    {
      path: '/v1/swarm/run',
      body: { operation: 'map', params: { prompt: 'Crash {{item}}', items: ['x'] } },
      table: 'swarm_runs',
      wf: 'swarm',
    },
    {
      path: '/v1/enterprise/learn',
      body: { sources: [{ text: 'Crash window.', title: 'cw' }] },
      table: 'learn_jobs',
      wf: 'learn',
    },
  ];
  for (const c of cases) {
    const route = `POST ${c.path}`;
    const first = await post(c.path, `crash-${c.wf}`, c.body);
    expect(first.status).toBe(c.wf === 'learn' ? 202 : 200);
    const id = (first.body.id ?? first.body.job_id) as string;
    // As a dead process leaves it: the record and the running workflow exist, the claim has no answer, lease over.
    await abandon(route, `crash-${c.wf}`, IDEMPOTENCY_LEASE_SECONDS + 1);
    const retried = await post(c.path, `crash-${c.wf}`, c.body);
    expect(retried.status).toBe(first.status);
    expect(retried.body.id ?? retried.body.job_id).toBe(id);
    // A request that failed after the start frees its key: a fresh claim derives the same id again.
    await h.db.query(
      sql.unsafe`DELETE FROM idempotency_keys WHERE tenant_id = ${tenantId} AND key = ${`crash-${c.wf}`}`,
    );
    const reclaimed = await post(c.path, `crash-${c.wf}`, c.body);
    expect(reclaimed.status).toBe(first.status);
    expect(reclaimed.body.id ?? reclaimed.body.job_id).toBe(id);
    expect(reclaimed.headers.get('idempotent-replayed')).toBeNull();
    const rows = await h.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM ${sql.identifier([c.table])} WHERE tenant_id = ${tenantId} AND id = ${id}`,
    );
    expect(rows).toBe(1);
    expect(await runsOf(`${c.wf}-${id}`)).toBe(1);
  }
  // Exactly one job per case: one goal with the title, and its steps called the model once each.
  const goals = (await h.req('GET', '/v1/goals', { key })).body.data.filter(
    (g: any) => g.title === 'Crash window goal',
  );
  expect(goals).toHaveLength(1);
  await pollUntil(
    async () => (await h.req('GET', `/v1/goals/${goals[0].id}`, { key })).body.status,
    (s) => s === 'completed',
    120_000,
  );
  expect(chatsOf('Crash window goal')).toBe(2);
});

test('another tenant with the same Idempotency-Key and body gets its own job', async () => {
  const other = (await h.key(['runtime:chat'])).apiKey;
  const body = { title: 'Same key, two tenants', steps: steps(1) };
  const mine = await post('/v1/goals', 'shared-key', body);
  const theirs = await h.req('POST', '/v1/goals', { key: other, body, headers: { 'Idempotency-Key': 'shared-key' } });
  expect([mine.status, theirs.status]).toEqual([200, 200]);
  expect(theirs.body.id).not.toBe(mine.body.id);
  expect((await h.req('GET', `/v1/goals/${theirs.body.id}`, { key })).status).toBe(404);
});
