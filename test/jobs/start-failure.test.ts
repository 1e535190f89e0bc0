import { sql } from 'slonik';
import { z } from 'zod';
import { startHarness, type Harness } from '../helpers/harness';
import { startExtraApp } from '../helpers/extra-app';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

test('when Temporal is unreachable, creates answer 503 and leave nothing behind; the metric counts only real starts', async () => {
  const api = await startExtraApp(h, { temporal: 'unreachable' });
  const url = api.url;
  const key = (await h.key(['runtime:chat', 'runtime:records'])).apiKey;
  const post = async (path: string, body: unknown, idem?: string) => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idem ? { 'idempotency-key': idem } : {}),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
  };
  try {
    const steps = [{ title: 'a', prompt: 'b' }];
    const creates = [
      ['/v1/goals', { title: 'g', steps }],
      ['/v1/sovereign/goals', { title: 's', steps }],
      ['/v1/pad/dispatch', { agents: [{ name: 'x', prompt: 'y' }] }],
      ['/v1/swarm/run', { operation: 'map', params: { prompt: 'p {{item}}', items: ['1'] } }],
    ] as const;
    // Concurrently: each gives up on the unreachable cluster after the start deadline.
    const results = await Promise.all(creates.map(([path, body]) => post(path, body)));
    results.forEach((r, i) => {
      const path = creates[i][0];
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 503, code: 'service_unavailable' });
      // A 503 always tells the client when to retry, whichever site raised it.
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(r.body.error).toMatch(/workflow service is unavailable/);
    });
    const count = (table: string) =>
      h.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`);
    expect([await count('goals'), await count('pad_sessions'), await count('swarm_runs')]).toEqual([0, 0, 0]);
    const metrics = await (await fetch(`${url}/v1/metrics`)).text();
    expect(metrics).not.toMatch(/svc_workflow_starts_total\{kind="goal"\} [1-9]/);

    // Under an Idempotency-Key the record stays (an earlier attempt may have started its workflow); the retry
    // with the key, once Temporal answers, starts the workflow of that same record.
    const keyed = await post('/v1/goals', { title: 'kept', steps }, 'start-fails');
    expect(keyed.status).toBe(503);
    const kept = await h.db.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM goals WHERE title = 'kept'`);
    expect(kept).toHaveLength(1);
    const retried = await h.req('POST', '/v1/goals', {
      key,
      body: { title: 'kept', steps },
      headers: { 'Idempotency-Key': 'start-fails' },
    });
    expect(retried.status).toBe(200);
    expect(retried.body.id).toBe(kept[0]);
    expect((await h.client.workflow.getHandle(`goal-${kept[0]}`).describe()).type).toBe('goalWorkflow');
    await h.client.workflow.getHandle(`goal-${kept[0]}`).terminate('test done');
  } finally {
    await api.close();
  }
});
