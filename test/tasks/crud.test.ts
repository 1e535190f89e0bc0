import { sql } from 'slonik';
import type { Harness } from '../helpers/harness';
import { withHarness } from '../helpers/with-harness';

let h: Harness;
let key: string;
let other: string;
withHarness({ scopes: ['runtime:records'], other: true }, (harness, k, o) => ((h = harness), (key = k), (other = o)));

const diamond = {
  title: 'Diamond',
  surface: 'home',
  session_id: 'sess-1',
  priority: 3,
  metadata: { origin: 'test' },
  steps: [
    { id: 'a', title: 'A', action: 'save', args: { content: 'a' } },
    { id: 'b', title: 'B', action: 'save', args: { content: '{{steps.a.result}}' }, depends_on: ['a'] },
    { id: 'c', title: 'C', action: 'save', depends_on: ['a'] },
    {
      id: 'd',
      title: 'D',
      action: 'webhook',
      args: { url: 'https://example.com/h', secret: 'shh' },
      depends_on: ['b', 'c'],
    },
  ],
};

describe('task CRUD', () => {
  test('create returns the task record with its steps', async () => {
    const r = await h.req('POST', '/v1/tasks', { key, body: diamond });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      title: 'Diamond',
      surface: 'home',
      session_id: 'sess-1',
      priority: 3,
      metadata: { origin: 'test' },
      status: 'pending',
      description: null,
    });
    expect(r.body.id).toMatch(/^tsk_/);
    expect(r.body.steps.map((s: { id: string }) => s.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(r.body.steps[1]).toMatchObject({
      task_id: r.body.id,
      action: 'save',
      depends_on: ['a'],
      order_num: 1,
      status: 'pending',
      result: null,
      error: null,
      attempts: 0,
      started_at: null,
      finished_at: null,
    });
    // The webhook secret is stored for the worker but never returned.
    expect(r.body.steps[3].args).toEqual({ url: 'https://example.com/h', secret: '[redacted]' });
    const g = await h.req('GET', `/v1/tasks/${r.body.id}`, { key });
    expect(g.status).toBe(200);
    expect(g.body).toEqual(r.body);
  });

  test('steps without an id get a generated one; priority defaults to 0', async () => {
    const r = await h.req('POST', '/v1/tasks', {
      key,
      body: { title: 'Plain', steps: [{ title: 'x', action: 'fetch', args: { url: 'https://example.com' } }] },
    });
    expect(r.status).toBe(201);
    expect(r.body.priority).toBe(0);
    expect(r.body.steps[0].id).toMatch(/^stp_/);
  });

  test('list filters by status, surface and session_id with limit, offset and total', async () => {
    for (let i = 0; i < 3; i++)
      await h.req('POST', '/v1/tasks', { key, body: { title: `L${i}`, surface: 'studio', session_id: 'list-s' } });
    const all = await h.req('GET', '/v1/tasks?session_id=list-s&limit=2', { key });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.data.map((t: { title: string }) => t.title)).toEqual(['L2', 'L1']);
    const page2 = await h.req('GET', '/v1/tasks?session_id=list-s&limit=2&offset=2', { key });
    expect(page2.body.data.map((t: { title: string }) => t.title)).toEqual(['L0']);
    const bySurface = await h.req('GET', '/v1/tasks?surface=home', { key });
    expect(bySurface.body.data.every((t: { surface: string }) => t.surface === 'home')).toBe(true);
    expect(bySurface.body.total).toBeGreaterThanOrEqual(1);
    const byStatus = await h.req('GET', '/v1/tasks?status=completed', { key });
    expect(byStatus.body.total).toBe(0);
    expect((await h.req('GET', '/v1/tasks?limit=500', { key })).status).toBe(400);
    expect((await h.req('GET', '/v1/tasks?status=done', { key })).status).toBe(400);
  });

  test('PATCH moves a task to another session, or out of any (session_id is a create/update field)', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: { title: 'Move me', session_id: 'patch-a' } })).body;
    const moved = await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { session_id: 'patch-b' } });
    expect([moved.status, moved.body.session_id, moved.body.title]).toEqual([200, 'patch-b', 'Move me']);
    expect(
      (await h.req('GET', '/v1/tasks?session_id=patch-b', { key })).body.data.map((x: { id: string }) => x.id),
    ).toEqual([t.id]);
    expect((await h.req('GET', '/v1/tasks?session_id=patch-a', { key })).body.total).toBe(0);
    const cleared = await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { session_id: null } });
    expect(cleared.body.session_id).toBeNull();
    // Another field's update leaves the session as it is.
    await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { session_id: 'patch-c' } });
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { priority: 3 } })).body.session_id).toBe('patch-c');
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { session_id: '' } })).status).toBe(400);
  });

  test('empty query values count as absent (?surface=&status=&session_id=&limit=&offset=)', async () => {
    const all = await h.req('GET', '/v1/tasks', { key });
    const blank = await h.req('GET', '/v1/tasks?surface=&status=&session_id=&limit=&offset=', { key });
    expect(blank.status).toBe(200);
    expect(blank.body.total).toBe(all.body.total);
    expect(blank.body.total).toBeGreaterThan(0);
    expect(blank.body).toMatchObject({ limit: 50, offset: 0 });
    const sessionOnly = await h.req('GET', '/v1/tasks?surface=&session_id=list-s', { key });
    expect(sessionOnly.status).toBe(200);
    expect(sessionOnly.body.total).toBe(3);
  });

  test('another tenant sees none of it: 404 for the task, its steps and its execution', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: diamond })).body;
    expect((await h.req('GET', `/v1/tasks/${t.id}`, { key: other })).status).toBe(404);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key: other, body: { title: 'x' } })).status).toBe(404);
    expect((await h.req('DELETE', `/v1/tasks/${t.id}`, { key: other })).status).toBe(404);
    expect(
      (await h.req('POST', `/v1/tasks/${t.id}/steps`, { key: other, body: { title: 'x', action: 'save' } })).status,
    ).toBe(404);
    expect(
      (await h.req('PATCH', `/v1/tasks/${t.id}/steps/a`, { key: other, body: { status: 'completed' } })).status,
    ).toBe(404);
    expect((await h.req('DELETE', `/v1/tasks/${t.id}/steps/d`, { key: other })).status).toBe(404);
    expect((await h.req('POST', `/v1/tasks/${t.id}/execute`, { key: other })).status).toBe(404);
    expect((await h.req('GET', `/v1/tasks/${t.id}/execute`, { key: other })).status).toBe(404);
    expect((await h.req('GET', '/v1/tasks', { key: other })).body.total).toBe(0);
    // and the owner still has it untouched
    expect((await h.req('GET', `/v1/tasks/${t.id}`, { key })).body.steps).toHaveLength(4);
  });

  test('any runtime key of the tenant may use tasks (spec: key required); a bootstrap key may not', async () => {
    const chatOnly = (await h.key(['runtime:chat'])).apiKey;
    const r = await h.req('GET', '/v1/tasks', { key: chatOnly });
    expect(r.status).toBe(200);
    const boot = (await h.key(['bootstrap:app:home'], { kind: 'bootstrap' })).apiKey;
    expect((await h.req('GET', '/v1/tasks', { key: boot })).status).toBe(403);
  });
});

describe('validation', () => {
  test.each([
    ['metadata with a non-string value', { title: 't', metadata: { n: 1 } }, 'body.metadata.n'],
    [
      'args with a non-string value',
      { title: 't', steps: [{ title: 's', action: 'save', args: { content: true } }] },
      'body.steps.0.args.content',
    ],
    ['an unknown action', { title: 't', steps: [{ title: 's', action: 'teleport' }] }, 'body.steps.0.action'],
    ['a missing title', { steps: [] }, 'body.title'],
    ['a priority that is not an integer', { title: 't', priority: 1.5 }, 'body.priority'],
    ['an unknown field', { title: 't', colour: 'red' }, 'body'],
  ])('%s is 400 naming the field', async (_name, body, path) => {
    const r = await h.req('POST', '/v1/tasks', { key, body });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  test('depends_on must name steps of the same task', async () => {
    const r = await h.req('POST', '/v1/tasks', {
      key,
      body: { title: 't', steps: [{ id: 'a', title: 'a', action: 'save', depends_on: ['zzz'] }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([{ path: 'body.steps.0.depends_on', message: '"zzz" is not a step of this task' }]);
  });

  test('a result reference needs the step in depends_on', async () => {
    const r = await h.req('POST', '/v1/tasks', {
      key,
      body: {
        title: 't',
        steps: [
          { id: 'a', title: 'a', action: 'save', args: { content: 'x' } },
          { id: 'b', title: 'b', action: 'save', args: { content: '{{steps.a.result}}' } },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.details[0].path).toBe('body.steps.1.args');
  });

  test('a cycle on create is 400 naming it', async () => {
    const r = await h.req('POST', '/v1/tasks', {
      key,
      body: {
        title: 'cyclic',
        steps: [
          { id: 'a', title: 'a', action: 'save', depends_on: ['c'] },
          { id: 'b', title: 'b', action: 'save', depends_on: ['a'] },
          { id: 'c', title: 'c', action: 'save', depends_on: ['b'] },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/dependency cycle/);
    const msg: string = r.body.details[0].message;
    expect(msg).toMatch(/^dependency cycle [abc] → [abc] → [abc] → [abc]$/);
    expect(new Set(msg.replace('dependency cycle ', '').split(' → '))).toEqual(new Set(['a', 'b', 'c']));
    expect(
      (await h.req('GET', '/v1/tasks?limit=200', { key })).body.data.some(
        (t: { title: string }) => t.title === 'cyclic',
      ),
    ).toBe(false);
  });

  test('duplicate step ids and self-dependencies are 400', async () => {
    const dup = await h.req('POST', '/v1/tasks', {
      key,
      body: {
        title: 't',
        steps: [
          { id: 'a', title: 'a', action: 'save' },
          { id: 'a', title: 'b', action: 'save' },
        ],
      },
    });
    expect(dup.status).toBe(400);
    const self = await h.req('POST', '/v1/tasks', {
      key,
      body: { title: 't', steps: [{ id: 'a', title: 'a', action: 'save', depends_on: ['a'] }] },
    });
    expect(self.status).toBe(400);
    expect(self.body.details[0].message).toMatch(/cycle a → a/);
  });

  test('malformed JSON is 400, not 500', async () => {
    const r = await h.req('POST', '/v1/tasks', {
      key,
      raw: '{"title": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
  });
});

describe('steps', () => {
  test('append checks dependencies and cycles against existing steps', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: diamond })).body;
    const ok = await h.req('POST', `/v1/tasks/${t.id}/steps`, {
      key,
      body: { id: 'e', title: 'E', action: 'save', depends_on: ['d'] },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ id: 'e', task_id: t.id, order_num: 4, depends_on: ['d'], status: 'pending' });
    const unknown = await h.req('POST', `/v1/tasks/${t.id}/steps`, {
      key,
      body: { title: 'F', action: 'save', depends_on: ['nope'] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details[0].path).toBe('body.depends_on');
    const taken = await h.req('POST', `/v1/tasks/${t.id}/steps`, {
      key,
      body: { id: 'a', title: 'again', action: 'save' },
    });
    expect(taken.status).toBe(409);
    // A new step cannot close a cycle (the only way one can form on append is through its own id).
    const selfRef = await h.req('POST', `/v1/tasks/${t.id}/steps`, {
      key,
      body: { id: 'z', title: 'Z', action: 'save', depends_on: ['z'] },
    });
    expect(selfRef.status).toBe(400);
    expect(selfRef.body.details[0].message).toMatch(/cycle z → z/);
  });

  test('deleting a step others depend on is 409; a leaf can go', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: diamond })).body;
    const r = await h.req('DELETE', `/v1/tasks/${t.id}/steps/a`, { key });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/"b", "c" depend on it/);
    expect((await h.req('DELETE', `/v1/tasks/${t.id}/steps/d`, { key })).status).toBe(204);
    expect((await h.req('DELETE', `/v1/tasks/${t.id}/steps/d`, { key })).status).toBe(404);
    expect((await h.req('GET', `/v1/tasks/${t.id}`, { key })).body.steps.map((s: { id: string }) => s.id)).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  test('step PATCH accepts legal transitions only', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: diamond })).body;
    const done = await h.req('PATCH', `/v1/tasks/${t.id}/steps/a`, {
      key,
      body: { status: 'completed', result: 'by hand' },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', result: 'by hand' });
    expect(done.body.finished_at).not.toBeNull();
    expect((await h.req('PATCH', `/v1/tasks/${t.id}/steps/b`, { key, body: { status: 'running' } })).status).toBe(409);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}/steps/b`, { key, body: { status: 'failed' } })).status).toBe(409);
    const reopened = await h.req('PATCH', `/v1/tasks/${t.id}/steps/a`, { key, body: { status: 'pending' } });
    expect(reopened.body).toMatchObject({ status: 'pending', result: null, finished_at: null });
    expect((await h.req('PATCH', `/v1/tasks/${t.id}/steps/a`, { key, body: {} })).status).toBe(400);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}/steps/nope`, { key, body: { status: 'completed' } })).status).toBe(
      404,
    );
  });
});

describe('task status transitions', () => {
  test('legal PATCH transitions pass, illegal ones are 409', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: { title: 'T' } })).body;
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'running' } })).status).toBe(409);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'failed' } })).status).toBe(409);
    const done = await h.req('PATCH', `/v1/tasks/${t.id}`, {
      key,
      body: { status: 'completed', title: 'T2', priority: 5 },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', title: 'T2', priority: 5 });
    expect(done.body.updated_at >= t.updated_at).toBe(true);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'cancelled' } })).status).toBe(409);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'pending' } })).body.status).toBe(
      'pending',
    );
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'cancelled' } })).body.status).toBe(
      'cancelled',
    );
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: { status: 'bogus' } })).status).toBe(400);
    expect((await h.req('PATCH', `/v1/tasks/${t.id}`, { key, body: {} })).status).toBe(400);
  });

  test('DELETE removes the task and its steps', async () => {
    const t = (await h.req('POST', '/v1/tasks', { key, body: diamond })).body;
    expect((await h.req('DELETE', `/v1/tasks/${t.id}`, { key })).status).toBe(204);
    expect((await h.req('GET', `/v1/tasks/${t.id}`, { key })).status).toBe(404);
    expect(await h.db.oneFirst(sql.unsafe`SELECT count(*)::int AS n FROM task_steps WHERE task_id = ${t.id}`)).toBe(0);
    expect((await h.req('DELETE', `/v1/tasks/${t.id}`, { key })).status).toBe(404);
  });
});
