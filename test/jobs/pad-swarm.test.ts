import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream({ worker: true, scopes: ['runtime:chat'] }, (up) => ({ fake, h, key } = up));
beforeEach(async () => {
  // Requests of an earlier test may still be finishing: start each test with an idle upstream.
  await fake.waitFor(() => fake.inFlight === 0, 15_000);
  fake.reset();
});

const lastUser = (r: { body: any }) => String(r.body.messages.at(-1).content);

describe('parallel agent dispatch', () => {
  test('honours max_concurrency (seen by the upstream) and reports partial failures per agent', async () => {
    fake.onRequest((r) =>
      lastUser(r).includes('BROKEN') ? { status: 500 } : { reply: `answer to ${lastUser(r)}`, delayMs: 250 },
    );
    const agents = Array.from({ length: 7 }, (_, i) => ({
      name: `a${i}`,
      prompt: i === 3 ? 'BROKEN prompt' : `prompt ${i}`,
    }));
    const created = await h.req('POST', '/v1/pad/dispatch', { key, body: { agents, max_concurrency: 3 } });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe('running');
    expect(created.body.agents).toHaveLength(7);
    const id = created.body.id;
    const done = await pollUntil(
      () => h.req('GET', `/v1/pad/sessions/${id}`, { key }),
      (r) => r.body.status === 'completed',
    );
    expect(fake.maxInFlight).toBeLessThanOrEqual(3);
    expect(fake.maxInFlight).toBeGreaterThanOrEqual(2);
    expect(done.body.summary).toEqual({ total: 7, queued: 0, running: 0, completed: 6, failed: 1 });
    const broken = done.body.agents[3];
    expect(broken).toMatchObject({ name: 'a3', status: 'failed', output: null });
    expect(broken.error).toMatch(/HTTP 500/);
    expect(broken.attempts).toBe(3); // its own retry policy
    expect(done.body.agents[0]).toMatchObject({ status: 'completed', output: 'answer to prompt 0' });
    expect(done.body.agents[0].duration_ms).toBeGreaterThanOrEqual(200);

    const list = await h.req('GET', '/v1/pad/sessions', { key });
    expect(list.body.data[0].id).toBe(id);
    const stats = await h.req('GET', '/v1/pad/stats', { key });
    expect(stats.body.agents).toEqual({ total: 7, completed: 6, failed: 1 });
    expect(stats.body.success_rate).toBeCloseTo(6 / 7);
    expect(stats.body.duration_ms.p50).toBeGreaterThanOrEqual(200);
    expect(stats.body.duration_ms.p95).toBeGreaterThanOrEqual(stats.body.duration_ms.p50);
    expect(stats.body.agents_per_second).toBeGreaterThan(0);
  });

  test('results arrive per agent while the session runs', async () => {
    // The slow agent is held at the upstream until the fast one's result has been seen.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fake.onRequest((r) => ({ reply: 'ok', ...(lastUser(r).includes('slow') ? { gate } : {}) }));
    const created = await h.req('POST', '/v1/pad/dispatch', {
      key,
      body: {
        agents: [
          { name: 'fast', prompt: 'fast' },
          { name: 'slow', prompt: 'slow' },
        ],
      },
    });
    const mid = await pollUntil(
      () => h.req('GET', `/v1/pad/sessions/${created.body.id}`, { key }),
      (r) => r.body.agents[0].status === 'completed',
    );
    expect(mid.body.status).toBe('running');
    expect(mid.body.agents[1].status).toBe('running');
    release();
    await pollUntil(
      () => h.req('GET', `/v1/pad/sessions/${created.body.id}`, { key }),
      (r) => r.body.status === 'completed',
    );
  });

  test('validation, idempotency and tenant isolation', async () => {
    fake.setDefault({ reply: 'ok' });
    const bad = await h.req('POST', '/v1/pad/dispatch', { key, body: { agents: [], max_concurrency: 99 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: any) => d.path).sort()).toEqual(['body.agents', 'body.max_concurrency']);
    const body = { agents: [{ name: 'x', prompt: 'y' }] };
    const a = await h.req('POST', '/v1/pad/dispatch', { key, body, headers: { 'Idempotency-Key': 'pad-1' } });
    const b = await h.req('POST', '/v1/pad/dispatch', { key, body, headers: { 'Idempotency-Key': 'pad-1' } });
    expect(b.body.id).toBe(a.body.id);
    expect(
      (
        await h.req('POST', '/v1/pad/dispatch', {
          key,
          body: { agents: [{ name: 'z', prompt: 'y' }] },
          headers: { 'Idempotency-Key': 'pad-1' },
        })
      ).status,
    ).toBe(409);
    const other = (await h.key(['runtime:chat'])).apiKey;
    expect((await h.req('GET', `/v1/pad/sessions/${a.body.id}`, { key: other })).status).toBe(404);
    expect((await h.req('GET', '/v1/pad/sessions', { key: other })).body.data).toEqual([]);
    // Let the session's model call finish here, so it cannot land in the next test's upstream counters.
    await pollUntil(
      () => h.req('GET', `/v1/pad/sessions/${a.body.id}`, { key }),
      (r) => r.body.status === 'completed',
    );
  });
});

describe('swarm', () => {
  async function run(operation: string, params: unknown) {
    const r = await h.req('POST', '/v1/swarm/run', { key, body: { operation, params } });
    expect(r.status).toBe(200);
    expect(r.body.run_id).toBe(r.body.id);
    return pollUntil(
      () => h.req('GET', `/v1/swarm/runs/${r.body.id}`, { key }),
      (x) => ['completed', 'failed'].includes(x.body.status),
    );
  }

  test('map runs one prompt over every item in parallel', async () => {
    fake.onRequest((r) => ({ reply: lastUser(r).toUpperCase(), delayMs: 100 }));
    const done = await run('map', { prompt: 'shout {{item}}', items: ['a', 'b', 'c', 'd'], max_concurrency: 2 });
    expect(done.body.status).toBe('completed');
    expect(done.body.progress).toEqual({ done: 4, total: 4 });
    const outs = done.body.result.items.map((i: any) => [i.item, done.body.outputs[i.output_id]]);
    expect(outs).toEqual([
      ['a', 'SHOUT A'],
      ['b', 'SHOUT B'],
      ['c', 'SHOUT C'],
      ['d', 'SHOUT D'],
    ]);
    expect(fake.maxInFlight).toBeLessThanOrEqual(2);
  });

  test('vote tallies a majority and an agreement score', async () => {
    let n = 0;
    fake.onRequest(() => ({ reply: n++ % 3 === 2 ? 'Go\nbecause' : 'Rust\nbecause' }));
    const done = await run('vote', { question: 'Rust or Go?', voters: 6, options: ['Rust', 'Go'] });
    expect(done.body.result.winner).toBe('Rust');
    expect(done.body.result.agreement).toBeCloseTo(4 / 6);
    expect(done.body.result.counts).toEqual([
      { answer: 'Rust', votes: 4 },
      { answer: 'Go', votes: 2 },
    ]);
    expect(fake.chats).toHaveLength(6);
  });

  test('debate runs rounds of critique and revision, then a verdict', async () => {
    fake.onRequest((r) => ({ reply: `${r.body.messages[0].content.slice(0, 30)} says something` }));
    const done = await run('debate', { question: 'Tabs or spaces?', debaters: 2, rounds: 2 });
    expect(done.body.status).toBe('completed');
    expect(done.body.result.rounds).toHaveLength(2);
    expect(fake.chats).toHaveLength(5);
    const round2 = fake.chats.filter((c) => /round 2/.test(c.body.messages[0].content));
    expect(round2).toHaveLength(2);
    expect(lastUser(round2[0])).toMatch(/Earlier results:[\s\S]*Debater 2/);
    expect(done.body.outputs[done.body.result.verdict_output_id]).toBeDefined();
  });

  test('fanout_reduce combines the parts', async () => {
    fake.onRequest((r) => ({
      reply: /Combine/.test(lastUser(r)) ? 'combined' : `part:${lastUser(r).split('Your part: ')[1]}`,
    }));
    const done = await run('fanout_reduce', { task: 'Review the plan', subtasks: ['cost', 'risk', 'time'] });
    expect(done.body.outputs[done.body.result.reduced_output_id]).toBe('combined');
    const reduce = fake.chats.find((c) => /Combine/.test(lastUser(c)))!;
    expect(lastUser(reduce)).toMatch(/cost: part:cost[\s\S]*risk: part:risk[\s\S]*time: part:time/);
  });

  test('unknown operation lists the valid ones; params validated per operation; tenant isolation', async () => {
    const unknown = await h.req('POST', '/v1/swarm/run', { key, body: { operation: 'dance', params: {} } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/map, vote, debate, fanout_reduce/);
    const bad = await h.req('POST', '/v1/swarm/run', { key, body: { operation: 'vote', params: { voters: 99 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: any) => d.path).sort()).toEqual(['body.params.question', 'body.params.voters']);
    fake.setDefault({ reply: 'x' });
    const ok = await h.req('POST', '/v1/swarm/run', {
      key,
      body: { operation: 'map', params: { prompt: 'p {{item}}', items: ['1'] } },
    });
    const other = (await h.key(['runtime:chat'])).apiKey;
    expect((await h.req('GET', `/v1/swarm/runs/${ok.body.id}`, { key: other })).status).toBe(404);
  });
});
