import { sql } from 'slonik';
import { startHarness, type Harness } from '../helpers/harness';
import { startReceiver, verifySignature, type Receiver } from './receiver';
import { openStream, until } from './sse-client';

jest.setTimeout(120_000);

let h: Harness;
let rx: Receiver;
let key: string;
let tenantId: string;
const SECRET = 'webhook-secret-1';

beforeAll(async () => {
  // The receiver and the pages live on loopback, so private fetches are allowed here
  // (the refusal is tested in fetch-guard.test.ts).
  h = await startHarness({ worker: true, env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } });
  rx = await startReceiver();
  const k = await h.key(['runtime:records']);
  key = k.apiKey;
  tenantId = k.tenantId;
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const hook = (id: string, path: string, deps: string[] = [], extra: Record<string, string> = {}) => ({
  id,
  title: `hook ${id}`,
  action: 'webhook',
  args: { url: `${rx.url}${path}`, secret: SECRET, ...extra },
  depends_on: deps,
});

async function createTask(body: unknown): Promise<any> {
  const r = await h.req('POST', '/v1/tasks', { key, body });
  expect(r.status).toBe(201);
  return r.body;
}

async function runToEnd(taskId: string): Promise<any> {
  const r = await h.req('POST', `/v1/tasks/${taskId}/execute`, { key });
  expect(r.status).toBe(202);
  return until(async () => {
    const t = (await h.req('GET', `/v1/tasks/${taskId}`, { key })).body;
    return t.status !== 'running' && t.status !== 'pending' ? t : null;
  }, 60_000);
}

const overlaps = (a: { started_at: string; finished_at: string }, b: { started_at: string; finished_at: string }) =>
  a.started_at < b.finished_at && b.started_at < a.finished_at;

test('a diamond DAG runs the middle steps in parallel and signs every webhook', async () => {
  // b and c are held until both are in flight at once: only parallel execution gets past this.
  let release!: () => void;
  rx.route('/d/slow', { gate: new Promise<void>((r) => (release = r)) });
  const both = rx.waitFor(() => rx.on('/d/slow').length === 2, 60_000).then(() => release());
  const t = await createTask({
    title: 'diamond',
    steps: [
      hook('a', '/d/a', [], { content: 'alpha' }),
      hook('b', '/d/slow', ['a']),
      hook('c', '/d/slow', ['a']),
      hook('d', '/d/d', ['b', 'c'], { content: 'joined after {{steps.b.result}}' }),
    ],
  });
  const done = await runToEnd(t.id);
  await both;
  expect(done.status).toBe('completed');
  const s = Object.fromEntries(done.steps.map((x: any) => [x.id, x]));
  for (const id of ['a', 'b', 'c', 'd']) expect(s[id]).toMatchObject({ status: 'completed', attempts: 1, error: null });
  expect(s.b.result).toBe('HTTP 200: ok');
  // b and c overlap in time; d starts after both ended, a ended before both started.
  expect(overlaps(s.b, s.c)).toBe(true);
  expect(s.d.started_at >= s.b.finished_at && s.d.started_at >= s.c.finished_at).toBe(true);
  expect(s.a.finished_at <= s.b.started_at && s.a.finished_at <= s.c.started_at).toBe(true);
  const slow = rx.on('/d/slow');
  expect(slow).toHaveLength(2);
  expect(slow[0].startedAt < slow[1].endedAt! && slow[1].startedAt < slow[0].endedAt!).toBe(true);
  // Every delivery is signed (verified here independently with node:crypto) and carries an idempotency key.
  for (const r of [...rx.on('/d/a'), ...slow, ...rx.on('/d/d')]) {
    expect(verifySignature(r, SECRET)).toBe(true);
    expect(verifySignature(r, 'wrong-secret')).toBe(false);
    expect(r.headers['idempotency-key']).toMatch(new RegExp(`:${r.json.step_id}$`));
  }
  expect(rx.on('/d/a')[0].json).toMatchObject({ event: 'task.step', task_id: t.id, step_id: 'a', content: 'alpha' });
  // {{steps.b.result}} was replaced by b's stored result.
  expect(rx.on('/d/d')[0].json.content).toBe('joined after HTTP 200: ok');
  expect(rx.on('/d/d')[0].json.results).toEqual({ b: 'HTTP 200: ok', c: 'HTTP 200: ok' });
});

test('a wide fan-out runs its branches concurrently, then the join saves their results', async () => {
  // Held until four branches are in flight at once.
  let release!: () => void;
  rx.route('/w/slow', { gate: new Promise<void>((r) => (release = r)) });
  const four = rx
    .waitFor(() => rx.on('/w/slow').filter((r) => r.endedAt === undefined).length >= 4, 60_000)
    .then(() => release());
  const branches = Array.from({ length: 8 }, (_, i) => hook(`w${i}`, '/w/slow'));
  const t = await createTask({
    title: 'wide',
    steps: [...branches, { id: 'join', title: 'save all', action: 'save', depends_on: branches.map((b) => b.id) }],
  });
  const done = await runToEnd(t.id);
  await four;
  expect(done.status).toBe('completed');
  expect(rx.on('/w/slow')).toHaveLength(8);
  const join = done.steps.find((x: any) => x.id === 'join');
  expect(join.result).toMatch(/^doc_/); // the save step's result is the knowledge-store document it wrote
  const content = await h.db.oneFirst(
    sql.unsafe`SELECT content FROM task_outputs WHERE task_id = ${t.id} AND step_id = 'join' AND tenant_id = ${tenantId}`,
  );
  expect(content).toContain('[w0]\nHTTP 200: ok');
  expect(content).toContain('[w7]\nHTTP 200: ok');
});

test('a failed step skips its dependants, independent steps still run, the task fails', async () => {
  rx.route('/f/bad', { status: 400, body: 'no thanks' });
  const t = await createTask({
    title: 'failing',
    steps: [
      hook('bad', '/f/bad'),
      hook('after', '/f/after', ['bad']),
      hook('later', '/f/later', ['after']),
      hook('free', '/f/free'),
    ],
  });
  const done = await runToEnd(t.id);
  expect(done.status).toBe('failed');
  const s = Object.fromEntries(done.steps.map((x: any) => [x.id, x]));
  expect(s.bad.status).toBe('failed');
  expect(s.bad.error).toMatch(/HTTP 400: no thanks/);
  expect(s.bad.attempts).toBe(1); // a 4xx is permanent: not retried
  expect(s.after).toMatchObject({ status: 'skipped', error: 'Skipped: step bad failed.' });
  expect(s.later.status).toBe('skipped');
  expect(s.free.status).toBe('completed');
  expect(rx.on('/f/after')).toHaveLength(0);
  expect(rx.on('/f/free')).toHaveLength(1);
});

test('a webhook answering 503 is retried with backoff until it succeeds', async () => {
  rx.route('/r/flaky', { failFirst: 2 });
  const t = await createTask({ title: 'flaky', steps: [hook('h', '/r/flaky')] });
  const done = await runToEnd(t.id);
  expect(done.status).toBe('completed');
  expect(done.steps[0].attempts).toBe(3);
  const times = rx.on('/r/flaky').map((r) => r.startedAt);
  expect(times).toHaveLength(3);
  // Backoff 1 s, then 2 s (a little slack for timer granularity).
  expect(times[1] - times[0]).toBeGreaterThanOrEqual(900);
  expect(times[2] - times[1]).toBeGreaterThanOrEqual(1900);
});

test('a webhook answering with NUL bytes (or refusing with them) is recorded, not a failed write', async () => {
  // The receiver answers 200 with a NUL byte in its body (a binary answer), then a run of emoji.
  rx.route('/r/binary', { body: 'ok\u0000done!' + '🎉'.repeat(1500) });
  rx.route('/r/refuse', { status: 422, body: 'no\u0000pe' });
  const t = await createTask({ title: 'binary', steps: [hook('ok', '/r/binary'), hook('no', '/r/refuse')] });
  const done = await runToEnd(t.id);
  const [ok, no] = ['ok', 'no'].map((id) => done.steps.find((s: { id: string }) => s.id === id));
  expect(ok).toMatchObject({ status: 'completed', attempts: 1 });
  // The body is cut at 2,000 characters (here between two pairs).
  expect(ok.result).toMatch(/^HTTP 200: ok\uFFFDdone!(🎉)+$/);
  expect(ok.result.isWellFormed()).toBe(true);
  expect(no).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringContaining('422: no\uFFFDpe') });
});

test('fetch cleans HTML to text and passes it on', async () => {
  rx.route('/page', {
    contentType: 'text/html',
    body: '<html><head><title>T</title><script>var x=1</script></head><body><h1>Hello page</h1><p>Some <b>bold</b> text.</p></body></html>',
  });
  const t = await createTask({
    title: 'fetch',
    steps: [
      { id: 'get', title: 'get', action: 'fetch', args: { url: `${rx.url}/page` } },
      {
        id: 'keep',
        title: 'keep',
        action: 'save',
        args: { content: 'Got: {{steps.get.result}}' },
        depends_on: ['get'],
      },
    ],
  });
  const done = await runToEnd(t.id);
  expect(done.status).toBe('completed');
  const got = done.steps[0].result as string;
  expect(got).toContain('Hello page');
  expect(got).toContain('Some bold text.');
  expect(got).not.toMatch(/<|var x/);
  const saved = await h.db.oneFirst(
    sql.unsafe`SELECT text FROM documents WHERE id = ${done.steps[1].result} AND tenant_id = ${tenantId}`,
  );
  expect(saved).toBe(`Got: ${got}`);
});

test('SSE streams step updates in order with ids, ends with done and the task, and resumes by Last-Event-ID', async () => {
  rx.route('/s/x', { delayMs: 100 });
  const t = await createTask({
    title: 'stream',
    steps: [hook('a', '/s/x'), hook('b', '/s/x', ['a']), hook('c', '/s/x', ['b'])],
  });
  const full = await openStream(`${h.url}/v1/tasks/${t.id}/execute`, { key });
  expect(full.status).toBe(200);
  expect(full.contentType).toMatch(/text\/event-stream/);
  const ids = full.events.map((e) => Number(e.id));
  expect([...ids].sort((x, y) => x - y)).toEqual(ids);
  expect(new Set(ids).size).toBe(ids.length);
  const steps = full.events.filter((e) => !e.data.done).map((e) => `${e.data.step_id}:${e.data.status}`);
  expect(steps).toEqual(['a:running', 'a:completed', 'b:running', 'b:completed', 'c:running', 'c:completed']);
  expect(full.events[1].data).toEqual({ task_id: t.id, step_id: 'a', status: 'completed', snippet: 'HTTP 200: ok' });
  const last = full.events[full.events.length - 1];
  expect(last.data).toMatchObject({ done: true, status: 'completed', task: { id: t.id, status: 'completed' } });
  expect(last.data.task.steps.map((s: any) => s.status)).toEqual(['completed', 'completed', 'completed']);
  // Reconnect after the 2nd event: exactly the rest, without duplicates, and no new run.
  const resumed = await openStream(`${h.url}/v1/tasks/${t.id}/execute`, { key, lastEventId: full.events[1].id });
  expect(resumed.events.map((e) => e.id)).toEqual(full.events.slice(2).map((e) => e.id));
  expect(rx.on('/s/x')).toHaveLength(3);
  // GET with the event-stream type replays the latest run, too.
  const replay = await openStream(`${h.url}/v1/tasks/${t.id}/execute`, { key, method: 'GET' });
  expect(replay.events.map((e) => e.id)).toEqual(full.events.map((e) => e.id));
  const bad = await h.req('POST', `/v1/tasks/${t.id}/execute`, {
    key,
    headers: { 'last-event-id': 'abc', accept: 'text/event-stream' },
  });
  expect(bad.status).toBe(400);
});

test('the claim plans the run and the last step ends it: no local activity at all for a run that goes well, one done; a failing last step still ends the run', async () => {
  const save = (id: string, content: string, deps: string[] = []) => ({
    id,
    title: id.toUpperCase(),
    action: 'save',
    args: { content },
    depends_on: deps,
  });
  const markers = async (taskId: string) =>
    ((await h.client.workflow.getHandle(`task-${taskId}`).fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length;
  const dones = async (taskId: string) =>
    h.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM events WHERE tenant_id = ${tenantId} AND stream = ${`task:${taskId}`} AND type = 'done'`);

  // Literal saves (one statement each) and one that refers to its dependency (start, then completion).
  const t = await createTask({
    title: 'chain',
    steps: [save('a', 'alpha'), save('b', 'beta of {{steps.a.result}}', ['a']), save('c', 'gamma', ['b'])],
  });
  const full = await openStream(`${h.url}/v1/tasks/${t.id}/execute`, { key });
  expect(full.events.filter((e) => !e.data.done).map((e) => `${e.data.step_id}:${e.data.status}`)).toEqual([
    'a:running',
    'a:completed',
    'b:running',
    'b:completed',
    'c:running',
    'c:completed',
  ]);
  const last = full.events[full.events.length - 1].data;
  expect(last).toMatchObject({ done: true, status: 'completed', task: { id: t.id, status: 'completed' } });
  expect(last.task.steps.map((x: any) => [x.id, x.status, x.attempts])).toEqual([
    ['a', 'completed', 1],
    ['b', 'completed', 1],
    ['c', 'completed', 1],
  ]);
  expect(await h.client.workflow.getHandle(`task-${t.id}`).result()).toEqual({ status: 'completed' });
  expect(await markers(t.id)).toBe(0); // no begin (the claim gave the plan and the run key), no finish
  expect(await dones(t.id)).toBe(1);
  // The run's key is the claim's: on the task and on every step it ran.
  const runKey = (await h.req('GET', `/v1/tasks/${t.id}/execute`, { key })).body.run_id;
  expect(runKey).toMatch(/^run_/);
  expect(
    await h.db.anyFirst(sql.unsafe`SELECT run_id FROM task_steps WHERE tenant_id = ${tenantId} AND task_id = ${t.id}`),
  ).toEqual([runKey, runKey, runKey]);
  const b = (await h.req('GET', `/v1/tasks/${t.id}`, { key })).body.steps.find((x: any) => x.id === 'b');
  expect(
    await h.db.oneFirst(sql.unsafe`SELECT text FROM documents WHERE tenant_id = ${tenantId} AND id = ${b.result}`),
  ).toBe(`beta of ${last.task.steps[0].result}`);

  // The last step fails (nothing to save): the workflow settles it and ends the run as before.
  const f = await createTask({ title: 'fails', steps: [save('a', 'alpha'), save('z', '   ', ['a'])] });
  const failed = await openStream(`${h.url}/v1/tasks/${f.id}/execute`, { key });
  expect(failed.events[failed.events.length - 1].data).toMatchObject({ done: true, status: 'failed' });
  expect(await h.client.workflow.getHandle(`task-${f.id}`).result()).toEqual({ status: 'failed' });
  expect(await markers(f.id)).toBe(2); // the failed step's settle, the finish
  expect(await dones(f.id)).toBe(1);
});

test('executing a running task attaches to it; GET reports live then stored status', async () => {
  let release!: () => void;
  rx.route('/a/slow', { gate: new Promise<void>((r) => (release = r)) });
  const t = await createTask({ title: 'attach', steps: [hook('one', '/a/slow'), hook('two', '/a/fast', ['one'])] });
  const first = await h.req('POST', `/v1/tasks/${t.id}/execute`, { key });
  expect(first.status).toBe(202);
  expect(first.body).toMatchObject({ task_id: t.id, workflow_id: `task-${t.id}`, status: 'running', attached: false });
  const second = await h.req('POST', `/v1/tasks/${t.id}/execute`, { key });
  expect(second.status).toBe(202);
  expect(second.body.attached).toBe(true);
  const live = await until(async () => {
    const r = await h.req('GET', `/v1/tasks/${t.id}/execute`, { key });
    return r.body.source === 'workflow' && r.body.steps.some((s: any) => s.status === 'running') ? r.body : null;
  });
  expect(live.status).toBe('running');
  expect(live.run_id).toEqual(expect.any(String));
  release();
  const ended = await until(async () => {
    const r = await h.req('GET', `/v1/tasks/${t.id}/execute`, { key });
    return r.body.status === 'completed' ? r.body : null;
  });
  expect(ended.source).toBe('database');
  expect(ended.steps).toEqual([
    { id: 'one', status: 'completed' },
    { id: 'two', status: 'completed' },
  ]);
  expect(rx.on('/a/slow')).toHaveLength(1);
  expect(rx.on('/a/fast')).toHaveLength(1);
  // One workflow execution, with our search attributes and memo.
  const desc = await h.client.workflow.getHandle(`task-${t.id}`).describe();
  expect(desc.searchAttributes).toMatchObject({ SvcTenant: [tenantId], SvcKind: ['task'], SvcSurface: ['api'] });
  expect(await desc.memo).toEqual({ title: 'attach' });
  // Structure edits are refused while running; GET execute on a never-run task starts nothing.
  const idle = await createTask({ title: 'idle', steps: [hook('z', '/a/never')] });
  expect((await h.req('GET', `/v1/tasks/${idle.id}/execute`, { key })).body).toMatchObject({
    status: 'pending',
    source: 'database',
    run_id: null,
  });
  expect(rx.on('/a/never')).toHaveLength(0);
});

test('deleting a running task cancels its run and aborts the step in flight', async () => {
  rx.route('/c/hang', { hang: true });
  const t = await createTask({ title: 'cancel me', steps: [hook('h', '/c/hang'), hook('n', '/c/next', ['h'])] });
  expect((await h.req('POST', `/v1/tasks/${t.id}/execute`, { key })).status).toBe(202);
  await rx.waitFor(() => rx.on('/c/hang').length === 1);
  expect((await h.req('POST', `/v1/tasks/${t.id}/steps`, { key, body: { title: 'x', action: 'save' } })).status).toBe(
    409,
  );
  expect((await h.req('DELETE', `/v1/tasks/${t.id}`, { key })).status).toBe(204);
  expect((await h.req('GET', `/v1/tasks/${t.id}`, { key })).status).toBe(404);
  const handle = h.client.workflow.getHandle(`task-${t.id}`);
  await until(async () => (await handle.describe()).status.name === 'CANCELLED');
  await rx.waitFor(() => rx.on('/c/hang')[0].closedEarly);
  expect(rx.on('/c/next')).toHaveLength(0);
});

test('PATCH status cancelled stops a running task and ends its stream', async () => {
  rx.route('/p/hang', { hang: true });
  const t = await createTask({ title: 'patch-cancel', steps: [hook('h', '/p/hang')] });
  const streamed = openStream(`${h.url}/v1/tasks/${t.id}/execute`, { key });
  await rx.waitFor(() => rx.on('/p/hang').length === 1);
  const r = await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'cancelled' } });
  expect(r.status).toBe(200);
  expect(r.body.status).toBe('cancelled');
  expect(r.body.steps[0].status).toBe('cancelled');
  const { events } = await streamed;
  expect(events[events.length - 1].data).toMatchObject({ done: true, status: 'cancelled' });
  await until(async () => (await h.client.workflow.getHandle(`task-${t.id}`).describe()).status.name === 'CANCELLED');
  // Re-running a cancelled task starts a fresh run.
  rx.route('/p/hang', {});
  const again = await runToEnd(t.id);
  expect(again.status).toBe('completed');
});
