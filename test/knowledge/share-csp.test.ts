import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHarness, type Harness } from '../helpers/harness';
import { openBrowser, type PageProbe } from './browser';

// Issue 10 item 9: a share page must not make its viewers' browsers call an outside server.

let h: Harness;
let browser: PageProbe;
let beacon: http.Server;
let beaconUrl: string;
const hits: string[] = [];
const PIXEL = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///ywAAAAAAQABAAACAUwAOw==';

beforeAll(async () => {
  h = await startHarness();
  beacon = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from(PIXEL.split(',')[1], 'base64'));
  });
  await new Promise<void>((r) => beacon.listen(0, '127.0.0.1', () => r()));
  // Another port is another origin: for the viewer's browser this is an outside server.
  beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
  browser = await openBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => beacon?.close(r));
  await h?.close();
});

test('images load only from data: (or our origin); an outside image is never requested', async () => {
  const key = (await h.key(['runtime:chat'])).apiKey;
  const content = `<p>Tracked?</p><img src="${beaconUrl}/pixel.gif?viewer=1" alt="o"><img src="${PIXEL}" alt="i">`;
  const r = await h.req('POST', '/v1/share', { key, body: { title: 'Beacon', content, format: 'html' } });
  expect(r.status).toBe(201);
  const page = await h.req('GET', `/share/${r.body.id}`);
  const imgSrc = /img-src ([^;]*)/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
  expect(imgSrc?.trim().split(/\s+/).sort()).toEqual(["'self'", 'data:']); // no https: (any outside server), no *
  // The sanitiser keeps the outside image: only the CSP stands between it and the viewer.
  expect(page.text).toContain(`${beaconUrl}/pixel.gif`);
  await browser.open(`${h.url}/share/${r.body.id}`);
  const state = await browser.evaluate<{
    outside: string;
    inline: number;
  }>(`Promise.all([...document.images].map((img) =>
      img.complete ? null : new Promise((done) => { img.onload = done; img.onerror = done; })))
    .then(() => ({ outside: document.querySelector('img[alt="o"]')?.getAttribute('src') ?? '', inline: document.querySelector('img[alt="i"]').naturalWidth }))`);
  expect(state.outside).toContain(beaconUrl); // present in the DOM...
  expect(state.inline).toBe(1); // data: images render...
  expect(hits).toEqual([]); // ...but the outside server was never called
});
