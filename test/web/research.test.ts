import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, startQueueWorker, type Harness, type QueueWorker } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { withFirstWriteFailing } from '../helpers/db-faults';
import { openStream } from '../tasks/sse-client';
import { startPages, type PageServer } from './pages';

jest.setTimeout(180_000);

// Real local servers: a SearXNG-format search engine, the pages it points to, and the fake
// OpenAI-compatible model upstream. The worker is started and stopped by the tests.
let h: Harness;
let key: string;
let web: PageServer;
let model: FakeOpenAI;
let worker: QueueWorker | undefined;
let releaseSlow: (() => void) | undefined;

const PAGES: Record<string, string> = {
  '/p1':
    '<html><head><title>Marmot winter</title></head><body><article><p>Alpine marmots hibernate for up to nine months in burrows lined with dry grass.</p><p>During hibernation their heart rate drops to as few as five beats per minute.</p></article></body></html>',
  '/p2':
    '<html><head><title>Marmot colonies</title></head><body><article><p>A colony of alpine marmots huddles together to share body heat through the winter.</p><p>Young marmots survive their first winter only inside the family burrow.</p></article></body></html>',
};

beforeAll(async () => {
  web = await startPages();
  for (const [p, html] of Object.entries(PAGES))
    web.route(p, (_q, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  web.route('/slow', (_q, res) => {
    releaseSlow = () => {
      if (!res.headersSent && !res.destroyed)
        res
          .writeHead(200, { 'content-type': 'text/plain' })
          .end('Slow page: marmots wake up in April when the snow melts around the burrow.');
    };
  });
  web.route('/search', (q, res) => {
    const query = new URL(q.url ?? '', 'http://x').searchParams.get('q') ?? '';
    const results = /nothing/.test(query)
      ? []
      : /restart/.test(query)
        ? [{ url: `${web.url}/slow`, title: 'Slow', content: '' }]
        : [
            { url: `${web.url}/p1`, title: 'Marmot winter', content: '' },
            { url: `${web.url}/p2`, title: 'Marmot colonies', content: '' },
            { url: `${web.url}/p1?utm_source=x`, title: 'dup', content: '' },
          ];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  });
  model = await startFakeOpenAI();
  model.onRequest((req) => {
    const system = String(req.body?.messages?.[0]?.content ?? '');
    // A question saying "hold the model": its planning or report request is never answered (open until the client goes).
    if (String(req.body?.messages?.[1]?.content ?? '').includes('hold the model')) return { hang: true };
    if (system.includes('Plan web research'))
      return { reply: '{"queries": ["marmot hibernation", "marmot colony winter"]}' };
    // A report whose JSON holds \u0000 and lone-surrogate escapes (PostgreSQL stores neither once decoded).
    if (system.includes('research report') && JSON.stringify(req.body?.messages).includes('odd escapes'))
      return { reply: '{"report":"Marmots\\u0000 sleep\\ud800.","citations":[]}' };
    if (system.includes('research report') && String(req.body?.messages?.[1]?.content ?? '').includes('Slow page')) {
      return {
        reply: JSON.stringify({
          report: 'Marmots wake in spring [1].',
          citations: [{ id: 1, source: 1, quote: 'marmots wake up in April when the snow melts' }],
        }),
      };
    }
    if (system.includes('research report')) {
      return {
        reply: JSON.stringify({
          report:
            'Marmots hibernate for most of the year [1]. Colonies share heat [2]. They also migrate south for winter [3]. Their fur turns white [4].',
          citations: [
            { id: 1, source: 1, quote: 'Alpine marmots hibernate for up to nine months' },
            { id: 2, source: 2, quote: 'huddles together to share body heat' },
            { id: 3, source: 1, quote: 'marmots migrate south every winter' },
            { id: 4, source: 9, quote: 'fur turns white in the winter months' },
          ],
        }),
      };
    }
    return undefined;
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-research-'));
  const file = path.join(dir, 'svc.yaml');
  writeFileSync(file, `search:\n  engines:\n    - { name: local, type: searxng, base_url: "${web.url}" }\n`);
  h = await startHarness({ env: { SVC_CONFIG: file, OPENAI_BASE_URL: model.url, SVC_ALLOW_PRIVATE_FETCH: 'true' } });
  key = (await h.key(['runtime:chat'])).apiKey;
  worker = await startQueueWorker(h);
});
afterAll(async () => {
  releaseSlow?.();
  await worker?.stop();
  await h?.close();
  await model?.close();
  await web?.close();
});

const start = (body: unknown, headers?: Record<string, string>) =>
  h.req('POST', '/v1/capabilities/research', { key, body, headers });

test('end to end: plan, search, fetch, report; every citation verified, invented ones dropped and listed; SSE with resume', async () => {
  const r = await start({ query: 'How do alpine marmots survive winter?', depth: 'standard', wait_s: 60 });
  expect(r.status).toBe(200);
  const job = r.body;
  expect(job).toMatchObject({
    status: 'completed',
    stage: 'done',
    plan: ['How do alpine marmots survive winter?', 'marmot hibernation', 'marmot colony winter'],
  });
  expect(job.sources.map((s: { url: string; status: string }) => [s.url, s.status])).toEqual([
    [`${web.url}/p1`, 'fetched'],
    [`${web.url}/p2`, 'fetched'],
  ]);
  expect(job.report.citations).toEqual([
    { id: 1, source: 1, url: `${web.url}/p1`, quote: 'Alpine marmots hibernate for up to nine months' },
    { id: 2, source: 2, url: `${web.url}/p2`, quote: 'huddles together to share body heat' },
  ]);
  expect(job.report.unverified.map((u: { id: number; reason: string }) => [u.id, u.reason])).toEqual([
    [3, 'the quote does not occur in the cited source'],
    [4, 'the cited source was not fetched in this run'],
  ]);
  expect(job.report.markdown).toBe(
    'Marmots hibernate for most of the year [1]. Colonies share heat [2]. They also migrate south for winter. Their fur turns white.',
  );
  const polled = await h.req('GET', `/v1/capabilities/research/${job.id}`, { key });
  expect(polled.body).toEqual(job);

  const all = await openStream(`${h.url}/v1/capabilities/research/${job.id}/events`, { method: 'GET', key });
  expect(all.events.map((e) => e.event)).toEqual(['plan', 'sources', 'source.fetched', 'source.fetched', 'done']);
  const resumed = await openStream(`${h.url}/v1/capabilities/research/${job.id}/events`, {
    method: 'GET',
    key,
    lastEventId: all.events[1].id,
  });
  expect(resumed.events.map((e) => e.id)).toEqual(all.events.slice(2).map((e) => e.id));

  // Read-only: nothing was written to the web cache.
  expect(await h.db.oneFirst(require('slonik').sql.unsafe`SELECT count(*)::int FROM web_cache`)).toBe(0);
  // Another tenant sees nothing.
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', `/v1/capabilities/research/${job.id}`, { key: other })).status).toBe(404);
});

test('progress whose event fails once is retried whole: plan, sources and each fetched source once on the stream', async () => {
  // A database fault: the first plan, sources and source.fetched event written to a research stream fail. Each write
  // and its event are one transaction, so the retry writes both (a write committed alone made the retry skip it).
  const kinds = ['plan', 'sources', 'source.fetched'];
  const { fired } = await withFirstWriteFailing(
    h.db,
    { table: 'events', op: 'INSERT', when: "NEW.type = $kind AND NEW.stream LIKE 'research:%'", kinds },
    async () => {
      const r = await start({ query: 'How do alpine marmots survive winter?', depth: 'standard', wait_s: 60 });
      expect(r.body).toMatchObject({ status: 'completed', stage: 'done' });
      const all = await openStream(`${h.url}/v1/capabilities/research/${r.body.id}/events`, { method: 'GET', key });
      expect(all.events.map((e) => e.event)).toEqual(['plan', 'sources', 'source.fetched', 'source.fetched', 'done']);
    },
  );
  expect(fired).toEqual(kinds);
});

test('zero search results give a report that says so, without citations; Idempotency-Key returns the same job', async () => {
  const a = await start(
    { query: 'nothing at all about this', depth: 'quick', wait_s: 60 },
    { 'idempotency-key': 'research-1' },
  );
  const b = await start(
    { query: 'nothing at all about this', depth: 'quick', wait_s: 60 },
    { 'idempotency-key': 'research-1' },
  );
  expect(b.body.id).toBe(a.body.id);
  expect(a.body).toMatchObject({ status: 'completed', sources: [], report: { citations: [], unverified: [] } });
  expect(a.body.report.markdown).toMatch(/^No sources could be found/);
  const clash = await start({ query: 'another question entirely', wait_s: 0 }, { 'idempotency-key': 'research-1' });
  expect(clash.status).toBe(409);
});

test('a report whose JSON holds \\u0000 or a lone-surrogate escape completes with U+FFFD (the run used to fail)', async () => {
  const r = await start({ query: 'marmots with odd escapes', depth: 'quick', wait_s: 60 });
  expect(r.body).toMatchObject({ status: 'completed', error: null });
  expect(r.body.report.markdown).toBe('Marmots\uFFFD sleep\uFFFD.');
});

test('bad input is 400 naming the field; an unknown id is 404; cancel works', async () => {
  const bad = await start({ query: 'x', depth: 'bottomless' });
  expect(bad.status).toBe(400);
  expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['body.depth', 'body.query']);
  expect((await h.req('GET', '/v1/capabilities/research/res_missing', { key })).status).toBe(404);
  expect((await h.req('GET', '/v1/capabilities/research/nope', { key })).status).toBe(400);
  const r = await start({ query: 'restart cancel marmots', depth: 'quick' });
  expect(r.status).toBe(202);
  await pollUntil(
    () => h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key }),
    (x) => x.body.stage === 'fetching',
  );
  const c = await h.req('DELETE', `/v1/capabilities/research/${r.body.id}`, { key });
  expect(c.status).toBe(202);
  const done = await pollUntil(
    () => h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key }),
    (x) => x.body.status !== 'running' && x.body.status !== 'queued',
  );
  expect(done.body.status).toBe('cancelled');
  expect((await h.req('DELETE', `/v1/capabilities/research/${r.body.id}`, { key })).status).toBe(409);
  releaseSlow?.();
});

test('survives a worker restart mid-run: the job resumes from its stored steps and completes', async () => {
  releaseSlow = undefined;
  const r = await start({ query: 'restart survival of marmots', depth: 'quick' });
  expect(r.status).toBe(202);
  // The source fetch is in flight (the page has not answered): stop the worker now.
  await pollUntil(
    async () => releaseSlow !== undefined,
    (v) => v,
    60_000,
  );
  const plannedBefore = model.chats.length;
  await worker!.stop();
  worker = undefined;
  releaseSlow!();
  releaseSlow = undefined;
  expect((await h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key })).body.status).toBe('running');
  worker = await startQueueWorker(h);
  // The retried fetch reaches the page again; answer it this time at once.
  await pollUntil(
    async () => releaseSlow !== undefined,
    (v) => v,
    60_000,
  );
  releaseSlow!();
  const done = await pollUntil(
    () => h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key }),
    (x) => x.body.status === 'completed',
    90_000,
  );
  expect(done.body.sources).toEqual([expect.objectContaining({ url: `${web.url}/slow`, status: 'fetched' })]);
  expect(done.body.report).toMatchObject({
    markdown: 'Marmots wake in spring [1].',
    citations: [{ id: 1, source: 1, quote: 'marmots wake up in April when the snow melts' }],
  });
  // Planning was not repeated after the restart (quick depth plans without the model; the report is one call).
  expect(model.chats.length - plannedBefore).toBe(1);
});

/** The held (never answered) model request of the job asking `query`. */
const heldRequest = async (query: string) => {
  await model.waitFor(() => model.chats.some((c) => String(c.body?.messages?.[1]?.content).includes(query)), 30_000);
  return model.chats.find((c) => String(c.body?.messages?.[1]?.content).includes(query))!;
};
const streamTypes = async (id: string) =>
  h.db.anyFirst(sql.unsafe`SELECT type FROM events WHERE stream = ${`research:${id}`} ORDER BY id`);

// Research steps heartbeat (heartbeatTimeout 10 s; the SDK sends a heartbeat at most every 8 s), so a cancel reaches the
// step that waits for the model within seconds and aborts the request. They used to declare a 2-minute heartbeat
// timeout and never beat: the request stayed open until the model's own deadline (60 s planning, 120 s report), and
// the planning step then wrote its fallback plan and a `plan` event after the stream's `done`.
test('a cancel while the model plans closes the planning request within seconds; nothing follows done on the stream', async () => {
  const query = 'hold the model while planning marmot research';
  const r = await start({ query, depth: 'standard' });
  expect(r.status).toBe(202);
  const held = await heldRequest(query);
  expect(held.closedAt).toBeUndefined();
  const cancelledAt = Date.now();
  expect((await h.req('DELETE', `/v1/capabilities/research/${r.body.id}`, { key })).status).toBe(202);
  await model.waitFor(() => held.closedAt !== undefined, 12_000);
  expect(held.closedEarly).toBe(true);
  expect(held.closedAt! - cancelledAt).toBeLessThan(10_000);
  const done = await pollUntil(
    () => h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key }),
    (x) => x.body.status === 'cancelled',
  );
  expect(done.body).toMatchObject({ status: 'cancelled', plan: null });
  // The aborted step ends its attempt right after the request closes; give it time to write if it were going to.
  await new Promise((res) => setTimeout(res, 1500));
  expect(await streamTypes(r.body.id)).toEqual(['done']);
  expect((await h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key })).body.plan).toBeNull();
  // The question was not planned again (no retry of the cancelled step).
  expect(model.chats.filter((c) => String(c.body?.messages?.[1]?.content).includes(query))).toHaveLength(1);
});

test('a cancel while the model writes the report closes the report request within seconds; the stream ends with done', async () => {
  const query = 'hold the model while reporting on marmots';
  const r = await start({ query, depth: 'quick' });
  expect(r.status).toBe(202);
  const held = await heldRequest(query);
  expect(String(held.body?.messages?.[0]?.content)).toContain('research report');
  // The step heartbeats under a 10 s timeout, so a dead worker is noticed in 10 s and a model that does not answer
  // gets its extractive fallback within the attempt (the step used to be killed at 2 minutes, never having beaten).
  // Cancelling after its first heartbeat is the slow case: the next one is sent up to 8 s later.
  const handle = h.client.workflow.getHandle(`research-${r.body.id}`);
  const beating = await pollUntil(
    async () => (await handle.describe()).raw.pendingActivities ?? [],
    (acts) => acts.some((a) => a.activityType?.name === 'researchReport' && a.lastHeartbeatTime),
    10_000,
  );
  expect(beating).toHaveLength(1);
  const scheduled = (await handle.fetchHistory()).events!.map((e) => e.activityTaskScheduledEventAttributes);
  const reportStep = scheduled.find((a) => a?.activityType?.name === 'researchReport')!;
  expect(String(reportStep.heartbeatTimeout?.seconds)).toBe('10');
  const cancelledAt = Date.now();
  expect((await h.req('DELETE', `/v1/capabilities/research/${r.body.id}`, { key })).status).toBe(202);
  await model.waitFor(() => held.closedAt !== undefined, 15_000);
  expect(held.closedEarly).toBe(true);
  expect(held.closedAt! - cancelledAt).toBeLessThan(12_000);
  await pollUntil(
    () => h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key }),
    (x) => x.body.status === 'cancelled',
  );
  await new Promise((res) => setTimeout(res, 1500));
  expect(await streamTypes(r.body.id)).toEqual(['plan', 'sources', 'source.fetched', 'source.fetched', 'done']);
  // No extractive report was written in place of the aborted draft.
  const after = await h.req('GET', `/v1/capabilities/research/${r.body.id}`, { key });
  expect(after.body).toMatchObject({ status: 'cancelled', report: null });
});
