import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { z } from 'zod';
import { SvcKind, SvcTenant } from '../../workflows/search-attributes';
import { startHarness, startQueueWorker, type Harness, type QueueWorker } from '../helpers/harness';
import { makePdf } from './fixtures';
import { withSlowInserts } from '../helpers/db-faults';

/** A real local web server: an article, a PDF, a 404, and a page held until the test releases it. */
function webServer() {
  const hits: string[] = [];
  let release: () => void = () => {};
  let gate = new Promise<void>((r) => (release = r));
  let pdf: Buffer = Buffer.alloc(0);
  const server = http.createServer(async (req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/article') {
      res.setHeader('content-type', 'text/html');
      res.end(`<html><head><title>Travel policy</title></head><body><nav>Home Jobs Contact</nav><article><h1>Travel policy</h1>
        <p>Economy class is the default for flights shorter than six hours; business class needs a director's approval.</p>
        <p>Hotel bookings go through the travel desk, which negotiates corporate rates with partner chains.</p></article>
        <footer>Copyright</footer></body></html>`);
    } else if (req.url === '/handbook.pdf') {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(pdf);
    } else if (req.url?.startsWith('/slow')) {
      await gate;
      res.setHeader('content-type', 'text/plain');
      res.end('Tundra station maintenance happens every spring once the snow roads reopen for heavy vehicles.');
    } else {
      res.statusCode = 404;
      res.end('not here');
    }
  });
  return {
    hits,
    server,
    release: () => release(),
    hold: () => {
      gate = new Promise<void>((r) => (release = r));
    },
    setPdf: (b: Buffer) => (pdf = b),
    async start() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async stop() {
      release();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

let h: Harness;
let web: ReturnType<typeof webServer>;
let base: string;
let key: string;
let chatKey: string;
let worker: QueueWorker | undefined;

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const job = (id: string) => h.req('GET', `/v1/enterprise/learn/${id}`, { key }).then((r) => r.body);
const finished = (id: string) =>
  until(`job ${id} to finish`, async () => {
    const j = await job(id);
    return j.finished_at ? j : null;
  });

beforeAll(async () => {
  h = await startHarness({ env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } });
  web = webServer();
  base = await web.start();
  web.setPdf(
    await makePdf([['Handbook', 'Quarterly offsites happen in the mountains near Innsbruck.']], 'Employee handbook'),
  );
  const k = await h.key(['runtime:records', 'runtime:chat']);
  key = k.apiKey;
  chatKey = k.apiKey;
  worker = await startQueueWorker(h);
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await web?.stop();
  await h?.close();
});

test('a job learns every good source; a 404 page and an unknown document fail alone', async () => {
  const note = await h.req('POST', '/v1/ingest', {
    key: chatKey,
    body: { text: 'Badge photos are taken at reception on Tuesdays.', title: 'Badges' },
  });
  const start = await h.req('POST', '/v1/enterprise/learn', {
    key,
    body: {
      sources: [
        { url: `${base}/article` },
        { url: `${base}/missing` },
        { text: 'The cafeteria serves vegan curry every Thursday.', title: 'Menu' },
        { document_id: note.body.document.id },
        { document_id: 'doc_unknown' },
        { url: `${base}/handbook.pdf` },
      ],
    },
  });
  expect(start.status).toBe(202);
  expect(start.body).toEqual({ job_id: expect.stringMatching(/^lrn_/), status: 'queued' });
  const done = await finished(start.body.job_id);
  expect(done).toMatchObject({ status: 'completed', progress: { done: 6, total: 6 } });
  const [article, missing, text, fromDoc, unknown, pdf] = done.sources;
  expect(article).toMatchObject({ index: 0, kind: 'url', status: 'completed', chunks: 1 });
  expect(missing).toMatchObject({ kind: 'url', status: 'failed', error: expect.stringMatching(/HTTP 404/) });
  expect(text).toMatchObject({ kind: 'text', title: 'Menu', status: 'completed' });
  expect(fromDoc).toMatchObject({ kind: 'document', document_id: note.body.document.id, status: 'completed' });
  expect(unknown).toMatchObject({ status: 'failed', error: 'Document doc_unknown not found.' });
  expect(pdf).toMatchObject({ status: 'completed' });
  expect(web.hits.filter((x) => x === '/missing')).toHaveLength(1); // a 404 is permanent: not retried

  const learned = await h.req('GET', `/v1/documents/${article.learned_document_id}`, { key });
  expect(learned.body).toMatchObject({
    source_kind: 'learn',
    title: 'Travel policy',
    media_type: 'text/html',
    provenance: { url: `${base}/article`, job_id: start.body.job_id },
  });
  expect(learned.body.excerpt).not.toMatch(/Home Jobs Contact|Copyright/);
  const s = await h.req('GET', '/v1/enterprise/knowledge/search?q=business%20class%20flights', { key });
  expect(s.body.data[0]).toMatchObject({
    document_id: article.learned_document_id,
    url: `${base}/article`,
    source_kind: 'learn',
  });
  const pdfHit = await h.req('GET', '/v1/enterprise/knowledge/search?q=Innsbruck', { key });
  expect(pdfHit.body.data[0]).toMatchObject({ document_title: 'Employee handbook' });
  const memories = await h.req('GET', '/v1/memories/knowledge', { key: chatKey });
  expect(memories.body.data.filter((m: { provenance: string }) => m.provenance === 'learned')).toHaveLength(4);

  const desc = await h.client.workflow.getHandle(`learn-${start.body.job_id}`).describe();
  expect(desc.typedSearchAttributes.get(SvcKind)).toBe('learn');
  expect(desc.typedSearchAttributes.get(SvcTenant)).toBe((await h.req('GET', '/v1/key', { key })).body.tenant_id);

  const wipe = await h.req('DELETE', '/v1/enterprise/knowledge', { key });
  expect(wipe.body).toEqual({ deleted_documents: 4, deleted_chunks: 4 });
  expect((await h.req('GET', '/v1/enterprise/knowledge/search?q=Innsbruck', { key })).body.data).toEqual([]);
  expect((await h.req('GET', `/v1/documents/${note.body.document.id}`, { key })).status).toBe(200);
  expect((await h.req('GET', '/v1/enterprise/knowledge/search?q=badge%20photos', { key })).body.data).toHaveLength(1);
}, 90_000);

test('a job survives a worker restart in the middle of a source', async () => {
  web.hold();
  const start = await h.req('POST', '/v1/enterprise/learn', {
    key,
    body: { sources: [{ url: `${base}/slow-1` }, { text: 'Snow chains are stored in the garage.' }] },
  });
  await until('the slow page to be requested', async () => web.hits.includes('/slow-1'));
  await worker!.stop();
  const mid = await job(start.body.job_id);
  expect(mid.status).toBe('running');
  expect(mid.sources[0].status).toBe('running');
  web.release();
  worker = await startQueueWorker(h);
  const done = await finished(start.body.job_id);
  expect(done).toMatchObject({ status: 'completed', progress: { done: 2, total: 2 } });
  expect(done.sources.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed']);
  expect(web.hits.filter((x) => x === '/slow-1').length).toBeGreaterThanOrEqual(2);
  const s = await h.req('GET', '/v1/enterprise/knowledge/search?q=tundra%20station', { key });
  expect(s.body.data).toHaveLength(1);
}, 120_000);

test('a job of only bad sources fails; a cancelled job closes its open sources', async () => {
  const bad = await h.req('POST', '/v1/enterprise/learn', {
    key,
    body: { sources: [{ url: `${base}/gone` }, { document_id: 'doc_nope' }] },
  });
  const failed = await finished(bad.body.job_id);
  expect(failed).toMatchObject({ status: 'failed', progress: { done: 2, total: 2 }, error: expect.any(String) });

  web.hold();
  const slow = await h.req('POST', '/v1/enterprise/learn', { key, body: { sources: [{ url: `${base}/slow-2` }] } });
  await until('the slow page to be requested', async () => web.hits.includes('/slow-2'));
  const cancel = await h.req('POST', `/v1/enterprise/learn/${slow.body.job_id}/cancel`, { key });
  expect(cancel.status).toBe(202);
  const closed = await finished(slow.body.job_id);
  expect(closed).toMatchObject({ status: 'cancelled', sources: [expect.objectContaining({ status: 'cancelled' })] });
  web.release();
  expect((await h.req('POST', `/v1/enterprise/learn/${slow.body.job_id}/cancel`, { key })).status).toBe(409);
}, 90_000);

test('a job cancelled while a source is being indexed keeps nothing of it', async () => {
  // A slow database: storing a document takes 2 s, and the job is cancelled meanwhile. The source was cancelled
  // first, so the document its attempt stored afterwards is removed (it stayed searchable before).
  const insertsRunning = () =>
    h.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'active' AND query LIKE '%INSERT INTO documents%'
        AND query NOT LIKE '%pg_stat_activity%'`);
  const learned = (jobId: string) =>
    h.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM documents WHERE provenance->>'job_id' = ${jobId}`);
  await withSlowInserts(h.db, 'documents', 2, async () => {
    const started = await h.req('POST', '/v1/enterprise/learn', {
      key,
      body: { sources: [{ url: `${base}/article` }] },
    });
    const jobId = started.body.job_id as string;
    await until('the document insert to start', async () => (await insertsRunning()) > 0);
    expect((await h.req('POST', `/v1/enterprise/learn/${jobId}/cancel`, { key })).status).toBe(202);
    expect(await finished(jobId)).toMatchObject({ status: 'cancelled' });
    await until('the document insert to end', async () => (await insertsRunning()) === 0);
    await until('the attempt to settle', async () => (await learned(jobId)) === 0, 10_000);
    expect(await learned(jobId)).toBe(0);
  });
}, 90_000);

test('cancelling a job whose workflow is already gone answers 409 and settles the job', async () => {
  web.hold();
  const slow = await h.req('POST', '/v1/enterprise/learn', { key, body: { sources: [{ url: `${base}/slow-3` }] } });
  await until('the slow page to be requested', async () => web.hits.includes('/slow-3'));
  // Closed behind the API's back (an operator terminate, or the workflow ending right after the
  // route's finished check): the row is still unfinished, the workflow no longer accepts a cancel.
  await h.client.workflow.getHandle(`learn-${slow.body.job_id}`).terminate('test: closed before the cancel');
  expect((await h.req('GET', `/v1/enterprise/learn/${slow.body.job_id}`, { key })).body.finished_at).toBeNull();
  const cancel = await h.req('POST', `/v1/enterprise/learn/${slow.body.job_id}/cancel`, { key });
  expect(cancel.status).toBe(409);
  expect(JSON.stringify(cancel.body)).toMatch(/has already finished/);
  const job = (await h.req('GET', `/v1/enterprise/learn/${slow.body.job_id}`, { key })).body;
  expect(job.finished_at).not.toBeNull();
  expect(job.sources.map((s: { status: string }) => s.status)).toEqual(['cancelled']);
  expect((await h.req('POST', `/v1/enterprise/learn/${slow.body.job_id}/cancel`, { key })).status).toBe(409);
  web.release();
}, 90_000);

test('validation, unknown ids, tenant isolation and scope', async () => {
  const other = (await h.key(['runtime:records', 'runtime:spaces'])).apiKey;
  const theirSpace = await h.req('POST', '/v1/spaces', { key: other, body: { name: 's' } });
  for (const body of [
    {},
    { sources: [] },
    { sources: [{ url: 'x' }] },
    { sources: [{ url: `${base}/a`, text: 'both' }] },
    { sources: [{ text: '' }] },
    { sources: [{ title: 't' }] },
  ]) {
    expect((await h.req('POST', '/v1/enterprise/learn', { key, body })).status).toBe(400);
  }
  expect(
    (
      await h.req('POST', '/v1/enterprise/learn', {
        key,
        body: { sources: [{ text: 'x' }], space_id: theirSpace.body.id },
      })
    ).status,
  ).toBe(404);
  const mine = await h.req('POST', '/v1/enterprise/learn', {
    key,
    body: { sources: [{ text: 'Owned by the first tenant.' }] },
  });
  expect((await h.req('GET', `/v1/enterprise/learn/${mine.body.job_id}`, { key: other })).status).toBe(404);
  expect((await h.req('POST', `/v1/enterprise/learn/${mine.body.job_id}/cancel`, { key: other })).status).toBe(404);
  expect((await h.req('GET', '/v1/enterprise/learn/lrn_missing', { key })).status).toBe(404);
  await finished(mine.body.job_id);
  const wipe = await h.req('DELETE', '/v1/enterprise/knowledge', { key: other });
  expect(wipe.body).toEqual({ deleted_documents: 0, deleted_chunks: 0 });
  expect(
    (await h.req('GET', '/v1/enterprise/knowledge/search?q=owned%20first%20tenant', { key })).body.data,
  ).toHaveLength(1);
  expect(
    (
      await h.req('POST', '/v1/enterprise/learn', {
        key: chatKey.slice(0, -1) + (chatKey.endsWith('0') ? '1' : '0'),
        body: { sources: [{ text: 'x' }] },
      })
    ).status,
  ).toBe(401);
  const chatOnly = (await h.key(['runtime:chat'])).apiKey;
  // Learning is for any key of the tenant; wiping learned knowledge is the bulk operation that needs runtime:records.
  expect((await h.req('GET', '/v1/enterprise/knowledge/search?q=x', { key: chatOnly })).status).toBe(200);
  const wipeChat = await h.req('DELETE', '/v1/enterprise/knowledge', { key: chatOnly });
  expect([wipeChat.status, wipeChat.body.scope]).toEqual([403, 'runtime:records']);
}, 60_000);
