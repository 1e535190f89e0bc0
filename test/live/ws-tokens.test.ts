import { publishDispatch } from '../../activities/live/publish';
import { liveInterestOf } from '../../api/live/interest';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { withSlowInserts } from '../helpers/db-faults';
import { authed, client, replicas, until, type TestClient } from './ws-helpers';

let h: Harness;
let fake: FakeOpenAI;
const reps = replicas(() => h);
afterAll(() => reps.closeAll()); // declared first so it runs before the harness drops the database
withFakeUpstream({ scopes: ['runtime:chat'], worker: true }, (up) => ({ fake, h } = up));

const REPLY = 'Tokens travel from one replica to the socket on another.';

/** Streamed chat through `url`; returns the content the SSE stream delivered. */
async function streamChat(url: string, apiKey: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'Say something' }] }),
  });
  expect(res.status).toBe(200);
  let content = '';
  for (const line of (await res.text()).split('\n')) {
    if (!line.startsWith('data: {')) continue;
    content += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '';
  }
  return content;
}

const tokenFrames = (c: TestClient) => c.frames.filter((f) => f.type === 'token' || f.type === 'done');

test('a streamed chat on one replica reaches only its owner socket on another: token frames, then done', async () => {
  fake.setDefault({ reply: REPLY });
  const [a, b] = [await reps.start(), await reps.start()];
  const owner = await h.key(['runtime:chat']);
  const other = await h.key(['runtime:chat']);
  const co = await authed(b.ws, owner.apiKey, 'conv-1');
  const cx = await authed(b.ws, other.apiKey, 'conv-1'); // same session id, another tenant
  const anon = await client(b.ws);
  // Replica A learns of the subscription through NOTIFY before the chat is sent to it.
  await pollUntil(
    async () => liveInterestOf(a.deps)?.has(owner.tenantId, 'conv-1'),
    (x) => x === true,
  );

  const streamed = await streamChat(a.url, owner.apiKey, { 'X-Session-ID': 'conv-1' });
  expect(streamed).toBe(REPLY);
  await until(co.frames, (f) => f.type === 'done');
  const frames = tokenFrames(co);
  expect(frames.at(-1)).toEqual({ type: 'done', session: 'conv-1' });
  expect(frames.slice(0, -1).every((f) => f.type === 'token' && f.session === 'conv-1')).toBe(true);
  expect(
    frames
      .slice(0, -1)
      .map((f) => f.content)
      .join(''),
  ).toBe(REPLY);

  // A frame published after the generation reaches everyone: by then nothing else is in flight.
  await publishDispatch(h.db, 'marker');
  for (const c of [co, cx, anon]) await until(c.frames, (f) => f.type === 'agent_dispatch');
  expect(tokenFrames(cx)).toEqual([]);
  expect(tokenFrames(anon)).toEqual([]);
  expect(tokenFrames(co)).toHaveLength(frames.length); // exactly one done, nothing after it
  for (const c of [co, cx, anon]) c.ws.close();
});

test('a chat nobody subscribed to publishes nothing; a plain JSON chat reaches a subscriber of its request id', async () => {
  fake.setDefault({ reply: 'Plain answer.' });
  const r = await reps.start();
  const owner = await h.key(['runtime:chat']);
  const c = await authed(r.ws, owner.apiKey, 'req-live-42');
  expect(liveInterestOf(r.deps)?.has(owner.tenantId, 'conv-unwatched')).toBe(false);
  expect(await streamChat(r.url, owner.apiKey, { 'X-Session-ID': 'conv-unwatched' })).toBe('Plain answer.');

  const res = await fetch(`${r.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${owner.apiKey}`,
      'content-type': 'application/json',
      'X-Request-Id': 'req-live-42',
    },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }),
  });
  expect(res.status).toBe(200);
  await until(c.frames, (f) => f.type === 'done');
  expect(tokenFrames(c)).toEqual([
    { type: 'token', session: 'req-live-42', content: 'Plain answer.' },
    { type: 'done', session: 'req-live-42' },
  ]);
  c.ws.close();
});

test('a replica that starts after the subscription learns it by asking the others (sub_sync)', async () => {
  const a = await reps.start();
  const owner = await h.key(['runtime:chat']);
  const c = await authed(a.ws, owner.apiKey, 'conv-late');
  const late = await reps.start();
  await pollUntil(
    async () => liveInterestOf(late.deps)?.has(owner.tenantId, 'conv-late'),
    (x) => x === true,
  );
  c.ws.close();
});

test('a background response made in a session sends its tokens from the worker to the session’s socket, then done', async () => {
  fake.setDefault({ reply: 'Answered later, streamed live.', chunkDelayMs: 5 });
  // The write that ends the response is slowed: its usage takes 400 ms.
  await withSlowInserts(h.db, 'usage_daily', 0.4, async () => {
    const r = await reps.start();
    const owner = await h.key(['runtime:chat']);
    const other = await h.key(['runtime:chat']);
    const c = await authed(r.ws, owner.apiKey, 'conv-bg');
    const cx = await authed(r.ws, other.apiKey, 'conv-bg'); // same session id, another tenant
    const res = await fetch(`${r.url}/v1/responses`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.apiKey}`,
        'content-type': 'application/json',
        'X-Session-ID': 'conv-bg',
      },
      body: JSON.stringify({ input: 'Take your time', background: true }),
    });
    expect(res.status).toBe(200);
    const queued = (await res.json()) as { id: string; status: string };
    expect(queued.status).toBe('queued');
    await until(c.frames, (f) => f.type === 'done');
    // `done` comes once the response reads ended.
    const read = await fetch(`${r.url}/v1/responses/${queued.id}`, {
      headers: { authorization: `Bearer ${owner.apiKey}` },
    });
    expect(((await read.json()) as { status: string }).status).toBe('completed');
    const frames = tokenFrames(c);
    expect(frames.at(-1)).toEqual({ type: 'done', session: 'conv-bg' });
    expect(
      frames
        .slice(0, -1)
        .map((f) => f.content)
        .join(''),
    ).toBe('Answered later, streamed live.');
    await publishDispatch(h.db, 'marker-bg');
    await until(cx.frames, (f) => f.type === 'agent_dispatch' && f.action === 'marker-bg');
    expect(tokenFrames(cx)).toEqual([]);
    for (const x of [c, cx]) x.ws.close();
  });
});
