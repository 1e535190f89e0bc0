import type { AddressInfo } from 'node:net';
import net from 'node:net';
import pino from 'pino';
import Ajv2020 from 'ajv/dist/2020';
import { WebSocket } from 'ws';
import { publishDispatch, publishTokens } from '../../activities/live/publish';
import { sampleLive } from '../../activities/live/sample';
import { createApp } from '../../api/app';
import { createHttpServer } from '../../api/http-server';
import { attachLiveSocket } from '../../api/live/socket';
import { ServerFrame } from '../../schema/live-frames';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { client, replicas, until } from './ws-helpers';

let h: Harness;
const reps = replicas(() => h);
const apiReplica = reps.start;

beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  await reps.closeAll();
  await h?.close();
});

test('two API processes on one database send the same frames, each valid against the AsyncAPI document', async () => {
  const [a, b] = [await apiReplica(), await apiReplica()];
  const [ca, cb] = [await client(a.ws), await client(b.ws)];
  const sample = await sampleLive(h.db, new Date().toISOString());
  await until(
    ca.frames,
    (f) =>
      f.type === 'curiosity_sync' &&
      ca.frames.some((x) => x.type === 'resonance_sync' && x.sampled_at === sample.sampledAt),
  );
  await until(
    cb.frames,
    (f) =>
      f.type === 'curiosity_sync' &&
      cb.frames.some((x) => x.type === 'resonance_sync' && x.sampled_at === sample.sampledAt),
  );
  const pick = (fs: any[]) =>
    ['resonance_sync', 'sensory_sync', 'health_sync', 'curiosity_sync'].map((t) =>
      fs.filter((f) => f.type === t).at(-1),
    );
  expect(pick(ca.frames)).toEqual(pick(cb.frames));
  expect(pick(ca.frames)[0]).toMatchObject({
    eri: sample.state.eri,
    ers: sample.state.ers,
    key: sample.state.musical_key,
    bpm: sample.state.bpm,
  });

  await publishDispatch(h.db, 'goal');
  await until(ca.frames, (f) => f.type === 'agent_dispatch');
  await until(cb.frames, (f) => f.type === 'agent_dispatch');
  expect(ca.frames.find((f) => f.type === 'agent_dispatch')).toEqual({ type: 'agent_dispatch', action: 'goal' });

  const docRes = await h.req('GET', '/v1/asyncapi.json');
  const doc = docRes.body;
  expect(docRes.status).toBe(200);
  expect(doc.asyncapi).toBe('3.0.0');
  expect(doc.servers.default.pathname).toBe('/v1/ws');
  const ajv = new Ajv2020({ strict: false });
  for (const f of ca.frames) {
    const name = Object.keys(doc.components.messages).find((k) =>
      [
        doc.components.messages[k].payload.properties?.type?.const,
        ...(doc.components.messages[k].payload.properties?.type?.enum ?? []),
      ].includes(f.type),
    );
    expect(name).toBeDefined();
    const validate = ajv.compile(doc.components.messages[name!].payload);
    expect({ type: f.type, ok: validate(f), errors: validate.errors }).toEqual({
      type: f.type,
      ok: true,
      errors: null,
    });
    expect(ServerFrame.safeParse(f).success).toBe(true);
  }
  ca.ws.close();
  cb.ws.close();
});

test('token and done frames reach only the authenticated owner subscribed to the session', async () => {
  const a = await apiReplica();
  const b = await apiReplica();
  const owner = await h.key(['runtime:chat']);
  const other = await h.key(['runtime:chat']);
  const [co, cx, anon] = [await client(a.ws), await client(b.ws), await client(b.ws)];
  co.ws.send(JSON.stringify({ type: 'auth', key: owner.apiKey }));
  cx.ws.send(JSON.stringify({ type: 'auth', key: other.apiKey }));
  await until(co.frames, (f) => f.type === 'auth_ok');
  await until(cx.frames, (f) => f.type === 'auth_ok');
  for (const c of [co, cx]) c.ws.send(JSON.stringify({ type: 'subscribe', session: 'sess-1' }));
  anon.ws.send(JSON.stringify({ type: 'subscribe', session: 'sess-1' }));
  await until(co.frames, (f) => f.type === 'subscribed');
  await until(cx.frames, (f) => f.type === 'subscribed');
  expect((await until(anon.frames, (f) => f.type === 'error')).message).toMatch(/Authenticate first/);

  await publishTokens(h.db, { tenantId: owner.tenantId, session: 'sess-1', content: 'Hello there', done: true });
  await publishDispatch(h.db, 'marker'); // sent after the tokens on the same channel: a later frame for everyone
  await until(co.frames, (f) => f.type === 'agent_dispatch');
  await until(cx.frames, (f) => f.type === 'agent_dispatch');
  await until(anon.frames, (f) => f.type === 'agent_dispatch');
  expect(co.frames.filter((f) => f.type === 'token' || f.type === 'done')).toEqual([
    { type: 'token', session: 'sess-1', content: 'Hello there' },
    { type: 'done', session: 'sess-1' },
  ]);
  expect(cx.frames.some((f) => f.type === 'token' || f.type === 'done')).toBe(false);
  expect(anon.frames.some((f) => f.type === 'token' || f.type === 'done')).toBe(false);
  const bad = await client(a.ws);
  bad.ws.send(JSON.stringify({ type: 'auth', key: 'svc.nope.nope' }));
  expect((await until(bad.frames, (f) => f.type === 'error')).message).toMatch(/Invalid key/);
  for (const c of [co, cx, anon, bad]) c.ws.close();
});

test('heartbeat: a peer that stops answering pings is closed within two intervals', async () => {
  const r = await apiReplica({ heartbeatMs: 300 });
  const alive = await client(r.ws);
  const dead = await client(r.ws, { autoPong: false });
  const started = Date.now();
  await dead.closed;
  // The first tick pings, the second finds no pong and closes it (plus scheduling slack on a busy machine).
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  expect(alive.ws.readyState).toBe(WebSocket.OPEN);
  const metrics = (await fetch(`${r.url}/v1/metrics`).then((x) => x.text())).split('\n');
  expect(metrics.find((l) => l.startsWith('svc_ws_closed_total{reason="dead_peer"}'))).toMatch(/ [1-9]\d*$/);
  alive.ws.close();
});

test('a slow consumer is closed once its send buffer passes the cap; counted in /v1/metrics', async () => {
  const r = await apiReplica({ maxBufferedBytes: 64 * 1024, heartbeatMs: 60_000 });
  const port = Number(new URL(r.url).port);
  // A raw client that completes the handshake and then never reads.
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((res) => sock.once('connect', () => res()));
  sock.write(
    'GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  await new Promise<void>((res) => sock.once('data', () => res()));
  sock.pause();
  await pollUntil(
    async () => r.live.clients,
    (n) => n === 1,
  );
  const frame = { type: 'agent_dispatch' as const, action: 'x'.repeat(50) };
  for (let i = 0; i < 400_000 && r.live.clients > 0; i++) {
    r.live.broadcast(frame);
    if (i % 2000 === 0) await new Promise((res) => setImmediate(res));
  }
  expect(r.live.clients).toBe(0);
  const metrics = await fetch(`${r.url}/v1/metrics`).then((x) => x.text());
  expect(metrics).toMatch(/svc_ws_closed_total\{reason="slow_consumer"\} 1/);
  sock.destroy();
});

test('connection cap: the upgrade past the cap is refused with 503; other paths are not upgraded', async () => {
  const r = await apiReplica({ maxConnections: 2 });
  const c1 = await client(r.ws);
  const c2 = await client(r.ws);
  const refused = await new Promise<number>((resolve) => {
    const ws = new WebSocket(r.ws);
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(-1));
  });
  expect(refused).toBe(503);
  const wrongPath = await new Promise<number>((resolve) => {
    const ws = new WebSocket(r.ws.replace('/v1/ws', '/v1/other'));
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(-1));
  });
  expect(wrongPath).toBe(404);
  const plain = await fetch(`${r.url}/v1/ws`);
  expect(plain.status).toBe(426);
  c1.ws.close();
  c2.ws.close();
});

test('the per-address connection cap also refuses WebSocket upgrades: 429 with the JSON error body', async () => {
  const config = { ...h.config, http: { ...h.config.http, maxConnectionsPerAddress: 1 } };
  const log = pino({ level: 'silent' });
  const app = createApp({ config, db: h.db, log, temporal: { connection: h.connection, client: h.client } });
  const server = createHttpServer(app, config, log);
  const live = attachLiveSocket(server, app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ws`;
  try {
    const first = await client(url);
    const refused = await new Promise<{ status: number; body: string; retry?: string }>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, retry: res.headers['retry-after'] }));
      });
      ws.on('open', () => reject(new Error('the upgrade past the cap was accepted')));
    });
    expect(refused.status).toBe(429);
    expect(refused.retry).toBe('1');
    expect(JSON.parse(refused.body)).toEqual({
      error: 'Too many open connections from this address (limit 1).',
      code: 'rate_limited',
    });
    expect(live.clients).toBe(1);
    first.ws.close();
  } finally {
    await live.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('a subscribe message names a session id X-Session-ID could carry, or is refused naming the field', async () => {
  const a = await apiReplica();
  const owner = await h.key(['runtime:chat']);
  const c = await client(a.ws);
  c.ws.send(JSON.stringify({ type: 'auth', key: owner.apiKey }));
  await until(c.frames, (f) => f.type === 'auth_ok');
  // No chat can ever publish to these sessions: subscribing to one would wait forever in silence.
  for (const session of ['a\u0000b', 'x\ud800y', 'with spaces', 'x'.repeat(129)]) {
    const seen = c.frames.length;
    c.ws.send(JSON.stringify({ type: 'subscribe', session }));
    const reply = await until(
      c.frames,
      (f) => c.frames.indexOf(f) >= seen && f.type !== 'resonance_sync' && f.type !== 'sensory_sync',
    );
    expect({ session: session.slice(0, 20), reply }).toEqual({
      session: session.slice(0, 20),
      reply: { type: 'error', message: expect.stringMatching(/^Invalid message: session: 1-128 letters/) },
    });
  }
  c.ws.send(JSON.stringify({ type: 'subscribe', session: 'sess_2026-11-26:a.b' }));
  expect(await until(c.frames, (f) => f.type === 'subscribed')).toEqual({
    type: 'subscribed',
    message: 'sess_2026-11-26:a.b',
  });
  c.ws.close();
});
