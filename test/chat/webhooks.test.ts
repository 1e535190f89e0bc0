import type http from 'node:http';
import OpenAI, { toFile } from 'openai';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startPages, type PageServer } from '../web/pages';
import { startExtraApp } from '../helpers/extra-app';

// Webhook endpoints: background responses and batches end, a real worker's delivery workflow POSTs OpenAI's events to
// a real local receiver, signed as Standard Webhooks (verified with OpenAI's SDK).

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;
let receiver: PageServer;
/** What the receiver got, by path: body and headers. */
const got = new Map<string, Array<{ body: string; headers: http.IncomingHttpHeaders }>>();
/** Statuses the receiver answers, by path, in turn (then 200). */
const answers = new Map<string, number[]>();

withFakeUpstream(
  { scopes: ['runtime:chat'], worker: true, resetEach: { reply: 'ok' }, env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } },
  (up) => {
    ({ fake, h, key } = up);
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);
beforeAll(async () => {
  receiver = await startPages();
  for (const path of ['/a', '/b', '/c', '/other'])
    receiver.route(path, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (!got.has(path)) got.set(path, []);
        got.get(path)!.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
        res.writeHead(answers.get(path)?.shift() ?? 200).end('ok');
      });
    });
});
afterAll(() => receiver?.close());

const endpoint = async (path: string, events?: string[], k = key) => {
  const r = await h.req('POST', '/v1/webhooks', { key: k, body: { url: `${receiver.url}${path}`, events } });
  expect(r.status).toBe(200);
  return r.body as { id: string; secret: string };
};
const received = (path: string, n = 1) =>
  pollUntil(
    async () => got.get(path) ?? [],
    (l) => l.length >= n,
    30_000,
  );
const unwrap = (e: { body: string; headers: http.IncomingHttpHeaders }, secret: string) =>
  client.webhooks.unwrap(e.body, e.headers as Record<string, string>, secret);

test('a background response that ends is POSTed as response.completed, signed (OpenAI’s SDK verifies it)', async () => {
  const hook = await endpoint('/a');
  expect(hook.id).toMatch(/^whep_/);
  expect(hook.secret).toMatch(/^whsec_/);
  const listed = await h.req('GET', '/v1/webhooks', { key });
  expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([hook.id]);
  expect(listed.body.data[0]).not.toHaveProperty('secret');

  const resp = await client.responses.create({ model: 'mid', input: 'Hello', background: true });
  const [delivery] = await received('/a');
  const event = await unwrap(delivery, hook.secret);
  expect(event).toMatchObject({ object: 'event', type: 'response.completed', data: { id: resp.id } });
  expect(contractErrors('WebhookResponseCompleted', JSON.parse(delivery.body))).toEqual([]);
  expect(delivery.headers['webhook-id']).toBe(event.id);
  // A wrong secret, or a changed body, does not verify.
  await expect(unwrap(delivery, `whsec_${Buffer.alloc(32, 7).toString('base64')}`)).rejects.toThrow();
  await expect(unwrap({ ...delivery, body: delivery.body.replace(resp.id, 'resp_x') }, hook.secret)).rejects.toThrow();
  await h.req('DELETE', `/v1/webhooks/${hook.id}`, { key });
});

test('batches: completed and failed (refused at creation) events; an endpoint gets only the events it asked for', async () => {
  const batches = await endpoint('/b', ['batch.completed', 'batch.failed']);
  const line = JSON.stringify({
    custom_id: 'x',
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'mid', messages: [{ role: 'user', content: 'hi' }] },
  });
  const file = await client.files.create({ file: await toFile(Buffer.from(line), 'in.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const bad = await client.files.create({ file: await toFile(Buffer.from('not json'), 'bad.jsonl'), purpose: 'batch' });
  const failed = await client.batches.create({
    input_file_id: bad.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  expect(failed.status).toBe('failed');
  // A response ends meanwhile: not among this endpoint's events.
  await client.responses.create({ model: 'mid', input: 'Hello', background: true });
  const deliveries = await received('/b', 2);
  const events = await Promise.all(deliveries.map((d) => unwrap(d, batches.secret)));
  expect(events.map((e) => [e.type, (e.data as { id: string }).id]).sort()).toEqual(
    [
      ['batch.completed', batch.id],
      ['batch.failed', failed.id],
    ].sort(),
  );
  await new Promise((r) => setTimeout(r, 1000));
  expect(got.get('/b')).toHaveLength(2);
  await h.req('DELETE', `/v1/webhooks/${batches.id}`, { key });
});

test('a receiver that fails is tried again with the same event id; one that refuses (4xx) is not', async () => {
  answers.set('/c', [503]);
  const flaky = await endpoint('/c', ['response.completed']);
  answers.set('/other', [400]);
  const refusing = await endpoint('/other', ['response.completed']);
  const resp = await client.responses.create({ model: 'mid', input: 'Hello', background: true });
  const tries = await received('/c', 2);
  expect(tries[0].headers['webhook-id']).toBe(tries[1].headers['webhook-id']);
  expect(((await unwrap(tries[1], flaky.secret)).data as { id: string }).id).toBe(resp.id);
  await new Promise((r) => setTimeout(r, 3000));
  expect(got.get('/other')).toHaveLength(1);
  expect(got.get('/c')).toHaveLength(2);
  await h.req('DELETE', `/v1/webhooks/${flaky.id}`, { key });
  await h.req('DELETE', `/v1/webhooks/${refusing.id}`, { key });
});

test('endpoints are the tenant’s own: another tenant’s are 404 and get none of its events; bad input; at most 10', async () => {
  const otherKey = (await h.key(['runtime:chat'])).apiKey;
  const theirs = await endpoint('/other', undefined, otherKey);
  const before = got.get('/other')?.length ?? 0;
  for (const [method, path] of [
    ['GET', `/v1/webhooks/${theirs.id}`],
    ['DELETE', `/v1/webhooks/${theirs.id}`],
  ])
    expect((await h.req(method, path, { key })).status).toBe(404);
  expect((await h.req('GET', '/v1/webhooks', { key })).body.data).toEqual([]);
  const resp = await client.responses.create({ model: 'mid', input: 'Hello', background: true });
  await pollUntil(
    () => client.responses.retrieve(resp.id),
    (r) => r.status === 'completed',
  );
  await new Promise((r) => setTimeout(r, 1000));
  expect(got.get('/other')?.length ?? 0).toBe(before);

  for (const [body, path] of [
    [{ url: 'ftp://example.com/x' }, 'body.url'],
    [{ url: 'not a url' }, 'body.url'],
    [{ url: `${receiver.url}/a`, events: ['response.created'] }, 'body.events.0'],
  ] as const) {
    const r = await h.req('POST', '/v1/webhooks', { key, body });
    expect([r.status, r.body.details?.[0]?.path]).toEqual([400, path]);
  }
  for (let i = 0; i < 10; i++) await endpoint('/a', ['batch.expired']);
  const eleventh = await h.req('POST', '/v1/webhooks', { key, body: { url: `${receiver.url}/a` } });
  expect(eleventh.status).toBe(409);
  expect(fake.chats.length).toBeGreaterThan(0);
});

test('without SVC_ALLOW_PRIVATE_FETCH, a private or local address is refused when the endpoint is added', async () => {
  const strict = await startExtraApp(h, { config: { allowPrivateFetch: false } });
  const fresh = (await h.key(['runtime:chat'])).apiKey;
  try {
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://[::1]/x',
      'http://10.0.0.7/x',
      'http://api.internal/x',
      'http://u:p@example.com/x',
    ]) {
      const r = await fetch(`${strict.url}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fresh}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      const body = (await r.json()) as { details?: Array<{ path: string }> };
      expect([url, r.status, body.details?.[0]?.path]).toEqual([url, 400, 'body.url']);
    }
    const ok = await fetch(`${strict.url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fresh}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://hooks.example.com/svc' }),
    });
    expect(ok.status).toBe(200);
  } finally {
    await strict.close();
  }
});
