import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { sql } from 'slonik';
import { z } from 'zod';
import { readEventsAfter } from '../../activities/store/events';
import { getGoalRow } from '../../activities/store/goals';
import { tickUpdate } from '../../workflows/job-defs';
import { quiet } from '../helpers/history';

let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream({ worker: true, scopes: ['runtime:chat'] }, (up) => ({ fake, h, key } = up));
beforeEach(() => {
  fake.reset();
  fake.onRequest((r) => ({ reply: `out: ${r.body.messages.at(-1).content.split('\n')[0]}` }));
});

const getGoalRowById = (id: string) =>
  h.db.maybeOne(sql.type(z.object({ tenant_id: z.string() }))`SELECT tenant_id FROM goals WHERE id = ${id}`);

const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `S${i + 1}`, prompt: `Do step ${i + 1}.` }));

test('created ready with no step run; nothing runs between ticks; each tick runs exactly one step', async () => {
  const created = await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Tick me', steps: steps(3) } });
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ status: 'ready', step_index: 0, total_steps: 3, last_step: null });
  const id = created.body.id;
  // Nothing runs between ticks: the workflow is quiet with no timer and no step scheduled, so only
  // an outside event can run one; the upstream's log agrees.
  expect(await quiet(h.client, `sovereign-${id}`)).toEqual({ stepsScheduled: 0, openTimers: 0 });
  expect(fake.chats).toHaveLength(0);

  const t1 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t1.status).toBe(200);
  expect(t1.body).toMatchObject({
    status: 'ready',
    step_index: 1,
    last_step: { index: 0, title: 'S1', output: 'out: Do step 1.' },
  });
  expect(fake.chats).toHaveLength(1);
  expect(await quiet(h.client, `sovereign-${id}`)).toEqual({ stepsScheduled: 1, openTimers: 0 });
  expect(fake.chats).toHaveLength(1);
  expect((await h.req('GET', `/v1/sovereign/goals/${id}`, { key })).body.step_index).toBe(1);

  await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  const t3 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t3.body).toMatchObject({
    status: 'completed',
    step_index: 3,
    last_step: { title: 'S3', output: 'out: Do step 3.' },
  });
  expect(fake.chats).toHaveLength(3);
  const after = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(after.status).toBe(409);
  expect(after.body.error).toMatch(/completed/);
  expect(fake.chats).toHaveLength(3);
});

test('concurrent ticks are serialised, each advancing exactly one step', async () => {
  fake.setDefault({ reply: 'slow', delayMs: 300 });
  fake.onRequest(undefined);
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Race', steps: steps(5) } })).body.id;
  const results = await Promise.all([1, 2, 3].map(() => h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key })));
  expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
  expect(results.map((r) => r.body.step_index).sort()).toEqual([1, 2, 3]);
  expect(fake.maxInFlight).toBe(1);
  expect(fake.chats).toHaveLength(3);
  // More concurrent ticks than steps left: the extra ones are 409, never a sixth step.
  const more = await Promise.all([1, 2, 3].map(() => h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key })));
  expect(more.map((r) => r.status).sort()).toEqual([200, 200, 409]);
  expect(fake.chats).toHaveLength(5);
});

test("a tick's answer shows the full output of every step run, also those a concurrent tick ran", async () => {
  // Longer than a snippet (300 characters), so an answer built from snippets would differ.
  const long = (p: string) => `${p} ${'x'.repeat(400)}`;
  fake.setDefault({ reply: 'unused', delayMs: 200 });
  fake.onRequest((r) => ({ reply: long(r.body.messages.at(-1).content.split('\n')[0]), delayMs: 200 }));
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Full', steps: steps(4) } })).body.id;
  // The first tick's answer already shows step 1 in full.
  const first = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(first.body.plan[0].output).toBe(long('Do step 1.'));
  // Three at once: each answer's plan shows every step completed by then (its own and the earlier
  // ticks'), in full, however the ticks interleaved with the answer's reads.
  const results = await Promise.all([1, 2, 3].map(() => h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key })));
  for (const r of results) {
    expect(r.status).toBe(200);
    const done = r.body.plan.filter((p: any) => p.status === 'completed');
    expect(done.length).toBeGreaterThanOrEqual(r.body.step_index);
    for (const p of done) expect(p.output).toBe(long(`Do step ${p.index + 1}.`));
    expect(r.body.last_step.output).toBe(long(`Do step ${r.body.last_step.index + 1}.`));
  }
});

test("a tick's answer is the goal as a read right after shows it, also after steps run elsewhere", async () => {
  // Steps 2 and 3 answer longer than a snippet (their answers need the stored text), 1 and 4 shorter.
  const long = (n: number) => `${n} ${'y'.repeat(400)} end`;
  fake.onRequest((r) => {
    const first = r.body.messages.at(-1).content.split('\n')[0];
    return { reply: first === 'Do step 2.' ? long(2) : first === 'Do step 3.' ? long(3) : `out: ${first}` };
  });
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Same', steps: steps(4) } })).body.id;
  const read = async () => (await h.req('GET', `/v1/sovereign/goals/${id}`, { key })).body;
  const t1 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t1.status).toBe(200);
  expect(t1.headers.get('content-type')).toBe('application/json; charset=utf-8');
  // The text is JSON.stringify of the answer (made from each entry's text kept from earlier ticks).
  expect(t1.text).toBe(JSON.stringify(t1.body));
  expect(t1.body).toEqual(await read());
  const t2 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t2.body.plan[1].output).toBe(long(2));
  expect(t2.text).toBe(JSON.stringify(t2.body));
  expect(t2.body).toEqual(await read());
  // Step 3 run by another API process (straight through Temporal): this process never saw it.
  await h.client.workflow.getHandle(`sovereign-${id}`).executeUpdate(tickUpdate);
  const t4 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t4.body).toMatchObject({ status: 'completed', step_index: 4 });
  expect(t4.body.plan.map((p: any) => p.output)).toEqual(['out: Do step 1.', long(2), long(3), 'out: Do step 4.']);
  expect(t4.body).toEqual(await read());
  expect(t4.text).toBe(JSON.stringify(t4.body));
});

test("a tick's step saves the goal row itself (no local activity after it); a failed step is saved by the workflow", async () => {
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Rows', steps: steps(3) } })).body.id;
  const tenantId = (await getGoalRowById(id))!.tenant_id;
  const t1 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t1.status).toBe(200);
  // The row as the step activity wrote it: what the workflow's own snapshot used to write.
  const row = (await getGoalRow(h.db, tenantId, 'sovereign', id))!;
  expect(row).toMatchObject({
    status: 'ready',
    step_index: 1,
    last_step: { index: 0, title: 'S1', outputId: t1.body.last_step.output_id, snippet: 'out: Do step 1.' },
    result: null,
    error: null,
  });
  expect(row.plan[0]).toEqual({
    index: 0,
    title: 'S1',
    prompt: 'Do step 1.',
    lane: 'svc-oracle',
    status: 'completed',
    outputId: t1.body.last_step.output_id,
    snippet: 'out: Do step 1.',
  });
  expect(row.plan[1]).toMatchObject({ status: 'pending', outputId: null });
  // The step's events and the state event, in this order (the last two written with the row).
  const events = await readEventsAfter(h.db, { tenantId, stream: `goal:${id}`, afterId: 0 });
  expect(events.slice(-3).map((e) => [e.type, e.data])).toEqual([
    ['step.started', { step: 'step-0', attempt: 1 }],
    ['step.completed', { step: 'step-0', output_id: t1.body.last_step.output_id, snippet: 'out: Do step 1.' }],
    ['goal.state', { status: 'ready', step_index: 1, total: 3 }],
  ]);
  // Local activities of this run: the snapshot at start only, none for the tick.
  const markers = async () =>
    ((await h.client.workflow.getHandle(`sovereign-${id}`).fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length;
  expect(await markers()).toBe(1);

  fake.onRequest(() => ({ status: 400 }));
  const t2 = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(t2.body).toMatchObject({ status: 'failed', step_index: 1 });
  expect(await getGoalRow(h.db, tenantId, 'sovereign', id)).toMatchObject({ status: 'failed', step_index: 1 });
  expect(await markers()).toBe(2);
});

test('Idempotency-Key on tick returns the same result without running a second step', async () => {
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Retry', steps: steps(3) } })).body.id;
  const headers = { 'Idempotency-Key': 'tick-abc' };
  const a = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key, headers });
  const b = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key, headers });
  expect(b.status).toBe(200);
  expect(b.body.step_index).toBe(1);
  expect(b.body.last_step).toEqual(a.body.last_step);
  expect(fake.chats).toHaveLength(1);
  const c = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key, headers: { 'Idempotency-Key': 'tick-def' } });
  expect(c.body.step_index).toBe(2);
  expect(fake.chats).toHaveLength(2);
});

test('Prefer: return=minimal answers the goal without its plan (also after steps run elsewhere); with an Idempotency-Key the full state', async () => {
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Small', steps: steps(4) } })).body.id;
  const tick = (headers: Record<string, string> = {}) =>
    h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key, headers });
  const read = async () => (await h.req('GET', `/v1/sovereign/goals/${id}`, { key })).body;
  const withoutPlan = ({ plan: _plan, ...rest }: Record<string, unknown>) => rest;

  const t1 = await tick({ Prefer: 'return=minimal' });
  expect(t1.status).toBe(200);
  expect(t1.headers.get('preference-applied')).toBe('return=minimal');
  expect(t1.body).not.toHaveProperty('plan');
  expect(t1.body).toMatchObject({
    id,
    status: 'ready',
    step_index: 1,
    total_steps: 4,
    last_step: { index: 0, title: 'S1', output: 'out: Do step 1.' },
  });
  expect(t1.body).toEqual(withoutPlan(await read()));

  // Step 2 run by another API process (straight through Temporal): this one reads the goal to answer.
  await h.client.workflow.getHandle(`sovereign-${id}`).executeUpdate(tickUpdate);
  const t3 = await tick({ Prefer: 'respond-async, return=minimal' });
  expect(t3.headers.get('preference-applied')).toBe('return=minimal');
  expect(t3.body).toMatchObject({ step_index: 3, last_step: { index: 2, output: 'out: Do step 3.' } });
  expect(t3.body).toEqual(withoutPlan(await read()));

  // Without the preference, or with a key (its stored answer must not depend on what a retry prefers): the full state.
  const keyed = await tick({ Prefer: 'return=minimal', 'Idempotency-Key': 'small-4' });
  expect(keyed.status).toBe(200);
  expect(keyed.headers.get('preference-applied')).toBeNull();
  expect(keyed.body.plan.map((p: any) => p.output)).toEqual([
    'out: Do step 1.',
    'out: Do step 2.',
    'out: Do step 3.',
    'out: Do step 4.',
  ]);
  const again = await tick({ 'Idempotency-Key': 'small-4' });
  expect(again.body).toEqual(keyed.body);
  expect(fake.chats).toHaveLength(4);
  const done = await tick({ Prefer: 'return=representation' });
  expect(done.status).toBe(409);
});

test('without steps the plan comes from the model lane; DELETE cancels and later ticks are 409', async () => {
  fake.onRequest((r) =>
    /Answer with JSON only/.test(r.body.messages.at(-1).content)
      ? { reply: '[{"title":"A","prompt":"Do A"},{"title":"B","prompt":"Do B"}]' }
      : { reply: 'ok' },
  );
  const created = await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Planned' } });
  // The create waited for the plan: ready, with the planned steps, and no step ran.
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ status: 'ready', step_index: 0, total_steps: 2, last_step: null });
  expect(created.body.plan.map((p: any) => [p.title, p.status])).toEqual([
    ['A', 'pending'],
    ['B', 'pending'],
  ]);
  const id = created.body.id;
  const state = (await h.req('GET', `/v1/sovereign/goals/${id}`, { key })).body;
  expect(state).toMatchObject({ status: 'ready', step_index: 0 });
  expect(state.plan.map((p: any) => p.title)).toEqual(['A', 'B']);
  expect(fake.chats).toHaveLength(1);
  const del = await h.req('DELETE', `/v1/sovereign/goals/${id}`, { key });
  expect(del.status).toBe(200);
  expect(del.body.status).toBe('cancelled');
  expect((await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key })).status).toBe(409);
  expect((await h.req('GET', `/v1/sovereign/goals/${id}`, { key })).body.status).toBe('cancelled');
});

test('without steps, a plan that cannot be made answers failed on create; ticks are then 409', async () => {
  fake.onRequest(() => ({ status: 400 }));
  const created = await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Unplannable' } });
  expect(created.status).toBe(200);
  expect(created.body.status).toBe('failed');
  expect(created.body.error).toBeTruthy();
  expect((await h.req('POST', `/v1/sovereign/goals/${created.body.id}/tick`, { key })).status).toBe(409);
});

test('tenant isolation: another tenant gets 404 on read, tick and delete', async () => {
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Mine', steps: steps(1) } })).body.id;
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', `/v1/sovereign/goals/${id}`, { key: other })).status).toBe(404);
  expect((await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key: other })).status).toBe(404);
  expect((await h.req('DELETE', `/v1/sovereign/goals/${id}`, { key: other })).status).toBe(404);
  expect(fake.chats).toHaveLength(0);
  const list = await h.req('GET', '/v1/sovereign/goals', { key });
  expect(list.body.data.map((g: any) => g.id)).toContain(id);
});

test('a long-lived sovereign goal continues as new (the test server suggests it after 150 events) without losing state', async () => {
  const n = 30;
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Long', steps: steps(n) } })).body.id;
  for (let i = 1; i <= n; i++) {
    const t = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
    expect({ i, status: t.status, step_index: t.body.step_index }).toEqual({ i, status: 200, step_index: i });
  }
  const runs: string[] = [];
  for await (const wf of h.client.workflow.list({ query: `WorkflowId = "sovereign-${id}"` })) runs.push(wf.runId);
  expect(runs.length).toBeGreaterThan(1);
  const final = await h.req('GET', `/v1/sovereign/goals/${id}`, { key });
  expect(final.body).toMatchObject({
    status: 'completed',
    step_index: n,
    last_step: { title: `S${n}`, output: `out: Do step ${n}.` },
  });
  expect(
    final.body.plan.every((p: any) => p.status === 'completed' && p.output === `out: Do step ${p.index + 1}.`),
  ).toBe(true);
  expect(fake.chats).toHaveLength(n);
});
