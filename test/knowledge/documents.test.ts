import { startHarness, type Harness } from '../helpers/harness';
import { bulkyDocx, makeDocx, makePdf, upload } from './fixtures';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let h: Harness;
let key: string;
let other: string;
const LIMIT = 64 * 1024;
beforeAll(async () => {
  h = await startHarness({ env: { SVC_UPLOAD_LIMIT: String(LIMIT) } });
  key = (await h.key(['runtime:records', 'runtime:spaces'])).apiKey;
  other = (await h.key(['runtime:records', 'runtime:spaces'])).apiKey;
});
afterAll(async () => h?.close());

test('PDF: a generated two-page PDF is parsed by unpdf, titled from its metadata and searchable', async () => {
  const pdf = await makePdf(
    [
      ['Quarterly report', 'Revenue grew in the Nordic region.'],
      ['Appendix', 'Glacier logistics overview.'],
    ],
    'Q3 Report',
  );
  const r = await upload(h, '/v1/documents/upload', key, { bytes: pdf, name: 'report.bin' });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({
    media_type: 'application/pdf',
    title: 'Q3 Report',
    source_kind: 'upload',
    size_bytes: pdf.length,
  });
  expect(r.body.excerpt).toContain('Revenue grew in the Nordic region.');
  expect(r.body.chunk_count).toBeGreaterThanOrEqual(1);
  const s = await h.req('GET', '/v1/enterprise/knowledge/search?q=glacier%20logistics', { key });
  expect(s.status).toBe(200);
  expect(s.body.data[0]).toMatchObject({ document_id: r.body.id, document_title: 'Q3 Report' });
  expect(s.body.data[0].highlight).toContain('<mark>Glacier</mark>');
});

test('a PDF whose title metadata holds NUL is stored (it was 400 blaming the request)', async () => {
  const pdf = await makePdf([['Marmots', 'Marmots hibernate in burrows.']], 'Mar\u0000mots');
  const r = await upload(h, '/v1/documents/upload', key, { bytes: pdf, name: 'nul-title.pdf' });
  expect(r.status).toBe(201);
  // Dropped, as a NUL in the text is (it was U+FFFD in titles only).
  expect(r.body.title).toBe('Marmots');
  expect(r.body.excerpt).toContain('Marmots hibernate in burrows.');
});

test('DOCX: a generated Word document is parsed by mammoth; the title field wins', async () => {
  const docx = await makeDocx('Onboarding', [
    'Every new hire receives a hardware stipend.',
    'Badges are issued on day one.',
  ]);
  const r = await upload(
    h,
    '/v1/documents/upload',
    key,
    { bytes: docx, name: 'x.txt', type: 'text/plain' },
    { title: 'Onboarding guide' },
  );
  expect(r.status).toBe(201);
  expect(r.body.media_type).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  expect(r.body.title).toBe('Onboarding guide');
  expect(r.body.excerpt).toMatch(/Onboarding\s+Every new hire receives a hardware stipend\./);
});

test('HTML, markdown and plain text are told apart by content, not by name or declared type', async () => {
  const html =
    '<!doctype html><html><head><title>Cafeteria hours</title></head><body><nav>Home | About</nav><main><article><h1>Cafeteria hours</h1><p>The cafeteria opens at seven and serves breakfast until ten every weekday morning, including bank holidays.</p><p>Lunch is served from noon to two in the afternoon.</p></article></main></body></html>';
  const a = await upload(h, '/v1/documents/upload', key, { bytes: html, name: 'notes.md', type: 'text/markdown' });
  expect(a.status).toBe(201);
  expect(a.body).toMatchObject({ media_type: 'text/html', title: 'Cafeteria hours' });
  expect(a.body.excerpt).toContain('The cafeteria opens at seven');
  expect(a.body.excerpt).not.toContain('<p>');

  const md = '# Parking rules\n\n- Visitors park on level two.\n- Chargers are first come, first served.\n';
  const b = await upload(h, '/v1/documents/upload', key, { bytes: md, name: 'page.html', type: 'text/html' });
  expect(b.body).toMatchObject({ media_type: 'text/markdown', title: 'Parking rules' });

  const txt = 'Plain words about the printer on floor three.';
  const c = await upload(h, '/v1/documents/upload', key, { bytes: txt, name: 'scan.pdf', type: 'application/pdf' });
  expect(c.body).toMatchObject({ media_type: 'text/plain', title: 'scan.pdf' });
});

test('unsupported content is 415; a non-multipart body is 415; a missing or empty file is 400', async () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  const r1 = await upload(h, '/v1/documents/upload', key, { bytes: png, name: 'doc.pdf', type: 'application/pdf' });
  expect(r1.status).toBe(415);
  expect(r1.body.code).toBe('unsupported_media_type');
  const garbage = Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 7919) % 256));
  expect((await upload(h, '/v1/documents/upload', key, { bytes: garbage })).status).toBe(415);
  const json = await h.req('POST', '/v1/documents/upload', { key, body: { text: 'hi' } });
  expect(json.status).toBe(415);
  const none = await upload(h, '/v1/documents/upload', key, null, { title: 'nothing' });
  expect(none.status).toBe(400);
  expect(none.body.error).toMatch(/field "file"/);
  expect((await upload(h, '/v1/documents/upload', key, { bytes: '' })).status).toBe(400);
  const broken = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(300, 0x41)]);
  const r2 = await upload(h, '/v1/documents/upload', key, { bytes: broken });
  expect(r2.status).toBe(400);
  expect(r2.body.error).toMatch(/PDF could not be read/);
});

test('a DOCX whose XML expands past 12 MB is 413 before it is parsed; nothing stored', async () => {
  // 13 MB of XML in a file of ~40 KB: mammoth holds ~30x the XML, and 400 MB (1.4 MB zipped) crashed the process.
  const bomb = bulkyDocx(13 * 1024 * 1024);
  expect(bomb.length).toBeLessThan(LIMIT);
  const before = (await h.req('GET', '/v1/documents', { key })).body.data.length;
  const r = await upload(h, '/v1/documents/upload', key, { bytes: bomb, name: 'big.docx', type: DOCX });
  expect([r.status, r.body.code]).toEqual([413, 'payload_too_large']);
  expect(r.body.error).toBe('The DOCX document expands to 14 MB of XML; at most 12 MB is read.');
  expect((await h.req('GET', '/v1/documents', { key })).body.data.length).toBe(before);
});

test('a DOCX whose main part is not named .xml still counts: past its size plus 12 MB is 413', async () => {
  // Mammoth follows the package relationship to any part name, so the XML-only count let this through (201).
  const bomb = bulkyDocx(13 * 1024 * 1024, 'word/body.bin');
  const r = await upload(h, '/v1/documents/upload', key, { bytes: bomb, name: 'renamed.docx', type: DOCX });
  expect([r.status, r.body.code]).toEqual([413, 'payload_too_large']);
  expect(r.body.error).toBe("The DOCX document expands to 14 MB; at most 12 MB (the file's size plus 12 MB) is read.");
  // The same document at 1 MB reads through the same relationship.
  const ok = await upload(h, '/v1/documents/upload', key, {
    bytes: bulkyDocx(1024 * 1024, 'word/body.bin'),
    name: 'renamed-small.docx',
    type: DOCX,
  });
  expect(ok.status).toBe(201);
  expect(ok.body.excerpt).toMatch(/^a{80}/);
});

test('a DOCX whose zip declares less than a part holds is 400 naming the part, read no further; nothing stored', async () => {
  // Declared 1,000 bytes, holds 11 MB: mammoth (JSZip) inflated all of it before comparing (a 2 MB file holding 2 GB
  // took 2.2 GB of memory); the part is now stopped at its declared size.
  const liar = bulkyDocx(11 * 1024 * 1024, 'word/document.xml', 1000);
  const before = (await h.req('GET', '/v1/documents', { key })).body.data.length;
  const r = await upload(h, '/v1/documents/upload', key, { bytes: liar, name: 'liar.docx', type: DOCX });
  expect([r.status, r.body.code]).toEqual([400, 'invalid_request']);
  const m =
    /^The DOCX document could not be read: part word\/document\.xml: too many bytes in the stream\. expected 1000\. got at least (\d+)$/.exec(
      r.body.error,
    );
  expect(m).not.toBeNull();
  expect(Number(m![1])).toBeLessThanOrEqual(64 * 1024); // one inflated chunk, not the 11 MB
  expect((await h.req('GET', '/v1/documents', { key })).body.data.length).toBe(before);
});

test('uploads over the configured limit are 413, just under it are accepted', async () => {
  const big = 'lorem ipsum dolor '.repeat(Math.ceil((LIMIT + 4096) / 18));
  const r = await upload(h, '/v1/documents/upload', key, { bytes: big });
  expect(r.status).toBe(413);
  expect(r.body.code).toBe('payload_too_large');
  const ok = 'lorem ipsum dolor '.repeat(Math.floor((LIMIT - 1024) / 18));
  expect((await upload(h, '/v1/documents/upload', key, { bytes: ok })).status).toBe(201);
});

test('listing is paged, newest first, tenant-scoped; other tenants get 404 for ids and spaces', async () => {
  const page1 = await h.req('GET', '/v1/documents?limit=2', { key });
  expect(page1.status).toBe(200);
  expect(page1.body.data).toHaveLength(2);
  expect(page1.body.total).toBeGreaterThanOrEqual(5);
  const page2 = await h.req('GET', '/v1/documents?limit=2&offset=2', { key });
  expect(page2.body.data[0].id).not.toBe(page1.body.data[0].id);
  expect(page1.body.data[0].created_at >= page1.body.data[1].created_at).toBe(true);
  expect((await h.req('GET', '/v1/documents?limit=0', { key })).status).toBe(400);
  expect((await h.req('GET', '/v1/documents?source_kind=bogus', { key })).status).toBe(400);

  const mine = page1.body.data[0].id;
  expect((await h.req('GET', `/v1/documents/${mine}`, { key })).status).toBe(200);
  expect((await h.req('GET', `/v1/documents/${mine}`, { key: other })).status).toBe(404);
  const theirs = await h.req('GET', '/v1/documents', { key: other });
  expect(theirs.body).toMatchObject({ data: [], total: 0 });
  const search = await h.req('GET', '/v1/enterprise/knowledge/search?q=glacier', { key: other });
  expect(search.body.data).toEqual([]);

  const space = await h.req('POST', '/v1/spaces', { key: other, body: { name: 'theirs' } });
  const into = await upload(h, '/v1/documents/upload', key, { bytes: 'sneaky' }, { space_id: space.body.id });
  expect(into.status).toBe(404);
  expect((await upload(h, '/v1/documents/upload', key, { bytes: 'x' }, { space_id: 'bad id!' })).status).toBe(400);
});

test('any runtime key of the tenant may use documents; bootstrap keys are refused', async () => {
  const chat = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', '/v1/documents', { key: chat })).status).toBe(200);
  expect((await upload(h, '/v1/documents/upload', chat, { bytes: 'x' })).status).toBe(201);
  const boot = (await h.key(['bootstrap:app:home'], { kind: 'bootstrap' })).apiKey;
  expect((await h.req('GET', '/v1/documents', { key: boot })).status).toBe(403);
  expect((await h.req('GET', '/v1/documents')).status).toBe(401);
});
