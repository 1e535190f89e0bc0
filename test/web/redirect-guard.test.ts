import { resolveGuarded } from '../../activities/browser/guard-proxy';
import { guardedRequest } from '../../activities/net/guarded-http';
import { parseConfig } from '../../schema/config';
import { startHarness, type Harness } from '../helpers/harness';
import { runTask } from '../tasks/run-task';
import { startPages, type PageServer } from './pages';

jest.setTimeout(180_000);

// The guard stays on, with one allow-list entry: the first hop lives on 127.0.0.2 (allowed), the
// target on 127.0.0.1 (not allowed). Every redirect from the allowed hop to another loopback,
// private or metadata spelling must be refused before a connection is made.
const ALLOW = '127.0.0.2/32';
let h: Harness;
let chatKey: string;
let recordsKey: string;
let hop: PageServer;
let target: PageServer;

beforeAll(async () => {
  h = await startHarness({ worker: true, env: { SVC_ALLOW_PRIVATE_FETCH: ALLOW } });
  chatKey = (await h.key(['runtime:chat'])).apiKey;
  recordsKey = (await h.key(['runtime:records'])).apiKey;
  target = await startPages('127.0.0.1');
  target.route('/secret', (_q, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('internal data'));
  hop = await startPages('127.0.0.2');
  hop.route('/ok', (_q, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html><head><title>Allowed hop</title></head><body><p>The first hop is reachable.</p></body></html>'),
  );
  for (const [name, location] of Object.entries(targets())) {
    hop.route(`/to-${name}`, (_q, res) => res.writeHead(302, { location }).end());
  }
});
afterAll(async () => {
  await hop?.close();
  await target?.close();
  await h?.close();
});

function targets(): Record<string, string> {
  const p = target.port;
  return {
    loopback: `http://127.0.0.1:${p}/secret`,
    neighbour: `http://127.0.0.3:${p}/secret`,
    decimal: `http://2130706433:${p}/secret`,
    hex: `http://0x7f000001:${p}/secret`,
    short: `http://127.1:${p}/secret`,
    ipv6: `http://[::1]:${p}/secret`,
    mapped: `http://[::ffff:127.0.0.1]:${p}/secret`,
    localhost: `http://localhost:${p}/secret`,
    metadata: 'http://169.254.169.254/latest/meta-data/',
    private: 'http://10.0.0.1/',
  };
}
const names = () => Object.keys(targets());
const REFUSED = /Refused to fetch .*(private|loopback)/;

test('SVC_ALLOW_PRIVATE_FETCH: true/false as before, or a list of addresses, CIDRs and host names; bad entries refused', () => {
  const parse = (v: string) => parseConfig({ SVC_ALLOW_PRIVATE_FETCH: v }).allowPrivateFetch;
  expect(parse('true')).toBe(true);
  expect(parse('0')).toBe(false);
  expect(parse('127.0.0.2/32, intranet.example ::1')).toEqual(['127.0.0.2/32', 'intranet.example', '::1']);
  expect(() => parse('10.0.0.0/33')).toThrow(/SVC_ALLOW_PRIVATE_FETCH: "10.0.0.0\/33" is not/);
  expect(() => parse('http://x')).toThrow(/SVC_ALLOW_PRIVATE_FETCH/);
});

test('web-fetch: the allowed first hop answers; every redirect to another loopback/private/metadata form is refused', async () => {
  const ok = await h.req('POST', '/v1/capabilities/web-fetch', { key: chatKey, body: { url: `${hop.url}/ok` } });
  expect([ok.status, ok.body.title]).toEqual([200, 'Allowed hop']);
  for (const name of names()) {
    const r = await h.req('POST', '/v1/capabilities/web-fetch', {
      key: chatKey,
      body: { url: `${hop.url}/to-${name}`, cache: false },
    });
    expect([name, r.status, r.body.error]).toEqual([name, 400, expect.stringMatching(REFUSED)]);
    expect(hop.hits.get(`/to-${name}`)).toBe(1); // the first hop was really contacted
  }
  // A direct request to the target is refused too: only 127.0.0.2 is on the list.
  await expect(guardedRequest(targets().loopback, { allowPrivate: [ALLOW] })).rejects.toMatchObject({
    kind: 'refused',
  });
  expect(target.hits.get('/secret') ?? 0).toBe(0);
});

test('/v1/ingest/web refuses the same redirects with 400 and stores nothing', async () => {
  const ok = await h.req('POST', '/v1/ingest/web', { key: chatKey, body: { url: `${hop.url}/ok` } });
  expect(ok.status).toBe(201);
  for (const name of ['loopback', 'hex', 'ipv6', 'metadata']) {
    const r = await h.req('POST', '/v1/ingest/web', { key: chatKey, body: { url: `${hop.url}/to-${name}` } });
    expect([name, r.status, r.body.error]).toEqual([name, 400, expect.stringMatching(REFUSED)]);
  }
  const docs = await h.req('GET', '/v1/documents', { key: chatKey });
  expect(docs.body.data.map((d: { title: string }) => d.title)).toEqual(['Allowed hop']);
  expect(target.hits.get('/secret') ?? 0).toBe(0);
});

test('the task fetch step: the allowed hop is read; a redirect to loopback fails the step with the reason', async () => {
  const done = await runTask(h, recordsKey, {
    title: 'redirect guard',
    steps: [
      { id: 'ok', title: 'ok', action: 'fetch', args: { url: `${hop.url}/ok` } },
      { id: 'bad', title: 'bad', action: 'fetch', args: { url: `${hop.url}/to-decimal` }, depends_on: ['ok'] },
    ],
  });
  expect(done.status).toBe('failed');
  expect(done.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'failed']);
  expect(done.steps[0].result).toContain('The first hop is reachable.');
  expect(done.steps[1]).toMatchObject({ attempts: 1, error: expect.stringMatching(REFUSED) });
  expect(target.hits.get('/secret') ?? 0).toBe(0);
});

test("the browser's guard proxy applies the same allow list to every hop it is asked for", async () => {
  const policy = { allowPrivate: [ALLOW], allowHosts: [] };
  await expect(resolveGuarded(`${hop.url}/ok`, policy)).resolves.toMatchObject({ address: '127.0.0.2' });
  for (const [name, url] of Object.entries(targets())) {
    await expect(resolveGuarded(url, policy).then(() => `${name} allowed`)).rejects.toThrow(/private|local name/);
  }
});
