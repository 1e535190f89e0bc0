import { guardedRequest } from '../../activities/net/guarded-http';
import { startHarness, type Harness } from '../helpers/harness';
import { startPages, type PageServer } from './pages';

jest.setTimeout(120_000);

// Default configuration: SVC_ALLOW_PRIVATE_FETCH off. The page server lives on loopback, so every
// request to it must be refused before a connection is made (its hit counter stays at zero).
let h: Harness;
let key: string;
let pages: PageServer;
beforeAll(async () => {
  h = await startHarness();
  key = (await h.key(['runtime:chat'])).apiKey;
  pages = await startPages();
  pages.route('/secret', (_q, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('internal data'));
  pages.route('/hop', (_q, res) => res.writeHead(302, { location: `http://127.0.0.1:${pages.port}/secret` }).end());
});
afterAll(async () => {
  await pages?.close();
  await h?.close();
});

test('every spelling of loopback, private and metadata addresses is refused with 400 and never contacted', async () => {
  const p = pages.port;
  const forms = [
    `http://127.0.0.1:${p}/secret`,
    `http://2130706433:${p}/secret`,
    `http://0x7f000001:${p}/secret`,
    `http://0x7f.0.0.1:${p}/secret`,
    `http://0177.0.0.1:${p}/secret`,
    `http://127.1:${p}/secret`,
    `http://127.0.1:${p}/secret`,
    `http://[::1]:${p}/secret`,
    `http://[::ffff:127.0.0.1]:${p}/secret`,
    `http://[::ffff:7f00:1]:${p}/secret`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/secret`,
    `http://0:${p}/secret`,
    `http://0.0.0.0:${p}/secret`,
    `http://localhost:${p}/secret`,
    `http://LOCALHOST.:${p}/secret`,
    `http://169.254.169.254/latest/meta-data/`,
    `http://[fd00::1]/`,
    `http://10.0.0.1/`,
    `http://192.168.1.1/`,
    `http://127.0.0.1:${p}/hop`,
  ];
  for (const url of forms) {
    const r = await h.req('POST', '/v1/capabilities/web-fetch', { key, body: { url } });
    expect([url, r.status, r.body.error]).toEqual([
      url,
      400,
      expect.stringMatching(/Refused to fetch .*(private|loopback)/),
    ]);
  }
  expect(pages.hits.get('/secret') ?? 0).toBe(0);
  expect(pages.hits.get('/hop') ?? 0).toBe(0);
});

test('with private fetches allowed the guard still re-checks every redirect hop (scheme, credentials, hop count)', async () => {
  pages.route('/to-file', (_q, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
  pages.route('/loop', (_q, res) => res.writeHead(302, { location: '/loop' }).end());
  await expect(guardedRequest(`${pages.url}/hop`, { allowPrivate: true })).resolves.toMatchObject({
    status: 200,
    url: `${pages.url}/secret`,
    redirects: 1,
  });
  await expect(guardedRequest(`${pages.url}/to-file`, { allowPrivate: true })).rejects.toMatchObject({
    kind: 'refused',
  });
  await expect(guardedRequest(`${pages.url}/loop`, { allowPrivate: true, maxRedirects: 3 })).rejects.toMatchObject({
    kind: 'redirects',
  });
  // The same redirect chain with private fetches off is refused at the first hop.
  await expect(guardedRequest(`${pages.url}/hop`, { allowPrivate: false })).rejects.toMatchObject({ kind: 'refused' });
  await expect(guardedRequest(`http://localhost:${pages.port}/hop`, { allowPrivate: false })).rejects.toMatchObject({
    kind: 'refused',
  });
});
