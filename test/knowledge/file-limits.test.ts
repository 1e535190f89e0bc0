import { startHarness, type Harness } from '../helpers/harness';
import { paddedPdf, upload } from './fixtures';

// Files are read in child processes whose data segment is capped (SVC_EXTRACT_MEMORY_MB; 1024 is the floor).
let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ env: { SVC_UPLOAD_LIMIT: String(4 * 1024 * 1024), SVC_EXTRACT_MEMORY_MB: '1024' } });
  key = (await h.key(['runtime:records'])).apiKey;
});
afterAll(async () => h?.close());

test('a PDF whose content stream inflates past the memory cap is 413; the service and the next file carry on', async () => {
  // 1.5 GB of spaces in a 1.5 MB file: read in the API process it took 3.4 GB of memory and 14 s, then 201.
  const bomb = await paddedPdf('Hello bomb', 1536 * 1024 * 1024);
  expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
  const before = (await h.req('GET', '/v1/documents', { key })).body.data.length;
  const r = await upload(h, '/v1/documents/upload', key, { bytes: bomb, name: 'bomb.pdf' });
  expect([r.status, r.body.code]).toEqual([413, 'payload_too_large']);
  expect(r.body.error).toBe(
    'The PDF needs more than the 1024 MB a file may use while it is read (it expands too far); it was left unread.',
  );
  expect((await h.req('GET', '/v1/documents', { key })).body.data.length).toBe(before);
  expect((await h.req('GET', '/v1/health')).status).toBe(200);

  // The same page with 1 MB of padding reads, in a process started after the last one ended.
  const ok = await upload(h, '/v1/documents/upload', key, {
    bytes: await paddedPdf('Hello marmots', 1024 * 1024),
    name: 'ok.pdf',
  });
  expect(ok.status).toBe(201);
  expect(ok.body.excerpt).toBe('Hello marmots');
});
