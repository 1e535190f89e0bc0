import { startHarness, type Harness } from '../helpers/harness';
import { CORPUS } from './corpus';
import { pollUntil } from '../helpers/poll';

let h: Harness;
let chat: string;
let records: string;
const docIds: string[] = [];
beforeAll(async () => {
  h = await startHarness();
  const k = await h.key(['runtime:chat', 'runtime:records']);
  chat = k.apiKey;
  records = chat;
  for (const d of CORPUS) {
    const r = await h.req('POST', '/v1/ingest', {
      key: chat,
      body: { text: d.text, title: d.title, kind: 'knowledge' },
    });
    expect(r.status).toBe(201);
    docIds.push(r.body.document.id);
  }
});
afterAll(async () => h?.close());

test.each(CORPUS.map((d, i) => [d.query, i] as const))(
  'search quality: %p finds its document in the top 3',
  async (query, i) => {
    const r = await h.req('GET', `/v1/enterprise/knowledge/search?q=${encodeURIComponent(query)}&limit=3`, {
      key: records,
    });
    expect(r.status).toBe(200);
    expect(r.body.mode).toBe('fts');
    expect(r.body.data.map((x: { document_id: string }) => x.document_id)).toContain(docIds[i]);
  },
);

test('hits carry document references, ranked scores and escaped highlights', async () => {
  await h.req('POST', '/v1/ingest', {
    key: chat,
    body: { text: 'Cleaning costs < 5 euros & the espresso grinder is cleaned weekly.', title: 'Grinder' },
  });
  const r = await h.req('GET', '/v1/enterprise/knowledge/search?q=espresso', { key: records });
  expect(r.body.data.length).toBeGreaterThanOrEqual(2);
  const scores = r.body.data.map((x: { score: number }) => x.score);
  expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  const grinder = r.body.data.find((x: { document_title: string }) => x.document_title === 'Grinder');
  expect(grinder).toMatchObject({ source_kind: 'ingest', ord: 0, url: null, space_id: null });
  expect(grinder.highlight).toContain('<mark>espresso</mark>');
  expect(grinder.highlight).toContain('&lt; 5 euros &amp; the');
  expect(grinder.highlight.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  expect(grinder.snippet).toContain('espresso grinder');
  expect(grinder.snippet).not.toContain('<mark>');
});

test('web search syntax: quoted phrases and exclusions', async () => {
  const phrase = await h.req('GET', `/v1/enterprise/knowledge/search?q=${encodeURIComponent('"paid leave"')}`, {
    key: records,
  });
  expect(phrase.body.data.map((x: { document_title: string }) => x.document_title)).toEqual(['Parental leave policy']);
  const minus = await h.req('GET', `/v1/enterprise/knowledge/search?q=${encodeURIComponent('espresso -grinder')}`, {
    key: records,
  });
  expect(minus.body.data.map((x: { document_title: string }) => x.document_title)).toEqual([
    'Coffee machine descaling',
  ]);
  const none = await h.req('GET', '/v1/enterprise/knowledge/search?q=zeppelin', { key: records });
  expect(none.body.data).toEqual([]);
  expect((await h.req('GET', '/v1/enterprise/knowledge/search', { key: records })).status).toBe(400);
  expect((await h.req('GET', '/v1/enterprise/knowledge/search?q=a&limit=500', { key: records })).status).toBe(400);
});

test('ingest writes memory fragments; knowledge memories are listed apart, newest first, paged', async () => {
  const note = await h.req('POST', '/v1/ingest', { key: chat, body: { text: 'Ada prefers tea over coffee.' } });
  expect(note.status).toBe(201);
  expect(note.body).toMatchObject({
    chunks: 1,
    memories: 1,
    document: { source_kind: 'ingest', title: 'Ada prefers tea over coffee.' },
  });
  const all = await h.req('GET', '/v1/memories?limit=2', { key: chat });
  expect(all.body.data[0]).toMatchObject({
    kind: 'note',
    provenance: 'told',
    content: 'Ada prefers tea over coffee.',
    document_id: note.body.document.id,
  });
  expect(all.body.total).toBe(CORPUS.length + 2);
  const knowledge = await h.req('GET', '/v1/memories/knowledge?limit=100', { key: chat });
  expect(knowledge.body.total).toBe(CORPUS.length);
  expect(knowledge.body.data.every((m: { kind: string }) => m.kind === 'knowledge')).toBe(true);
  const notes = await h.req('GET', '/v1/memories?kind=note', { key: chat });
  expect(notes.body.data.map((m: { content: string }) => m.content)).toContain('Ada prefers tea over coffee.');
  expect((await h.req('POST', '/v1/ingest', { key: chat, body: { text: '   ' } })).status).toBe(400);
  expect((await h.req('POST', '/v1/ingest', { key: chat, body: { text: 'x', kind: 'gossip' } })).status).toBe(400);
  expect(
    (await h.req('POST', '/v1/ingest', { key: chat, raw: '{"text":', headers: { 'content-type': 'application/json' } }))
      .status,
  ).toBe(400);
  expect((await h.req('POST', '/v1/ingest', { key: chat, body: { text: 'x', space_id: 'spc_nope' } })).status).toBe(
    404,
  );
});

test('long texts are split into several chunks, each searchable', async () => {
  const paragraphs = Array.from(
    { length: 30 },
    (_, i) =>
      `Section ${i}: the warehouse ${i % 2 ? 'forklift' : 'conveyor'} procedure number ${i} covers loading bay safety and daily inspection checklists for the night shift.`,
  );
  const r = await h.req('POST', '/v1/ingest', {
    key: chat,
    body: { text: paragraphs.join('\n\n'), title: 'Warehouse manual' },
  });
  expect(r.body.chunks).toBeGreaterThan(3);
  const s = await h.req('GET', '/v1/enterprise/knowledge/search?q=forklift&limit=50', { key: records });
  const ords = new Set(
    s.body.data
      .filter((x: { document_id: string }) => x.document_id === r.body.document.id)
      .map((x: { ord: number }) => x.ord),
  );
  expect(ords.size).toBe(r.body.chunks);
});

test('tenant isolation: another tenant sees no memories, no hits, cannot delete', async () => {
  const other = (await h.key(['runtime:chat', 'runtime:records'])).apiKey;
  expect((await h.req('GET', '/v1/memories', { key: other })).body.total).toBe(0);
  expect((await h.req('GET', '/v1/memories/knowledge', { key: other })).body.total).toBe(0);
  expect((await h.req('GET', '/v1/enterprise/knowledge/search?q=espresso', { key: other })).body.data).toEqual([]);
  expect((await h.req('DELETE', `/v1/enterprise/knowledge?document_id=${docIds[0]}`, { key: other })).status).toBe(404);
  expect((await h.req('GET', `/v1/documents/${docIds[0]}`, { key: records })).status).toBe(200);
});

test('DELETE /enterprise/knowledge?document_id= removes one document with its chunks and memories', async () => {
  const r = await h.req('DELETE', `/v1/enterprise/knowledge?document_id=${docIds[6]}`, { key: records });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ deleted_documents: 1, deleted_chunks: 1 });
  const s = await h.req('GET', '/v1/enterprise/knowledge/search?q=descale', { key: records });
  expect(s.body.data).toEqual([]);
  const mem = await h.req('GET', '/v1/memories/knowledge?limit=100', { key: chat });
  expect(mem.body.total).toBe(CORPUS.length - 1);
  expect((await h.req('DELETE', `/v1/enterprise/knowledge?document_id=${docIds[6]}`, { key: records })).status).toBe(
    404,
  );
});

test('web ingestion refuses loopback and private addresses (SSRF guard) with a 400', async () => {
  for (const url of [
    'http://127.0.0.1:9/',
    'http://localhost:8080/x',
    'http://[::1]/',
    'http://10.1.2.3/',
    'http://169.254.169.254/latest/meta-data',
  ]) {
    const r = await h.req('POST', '/v1/ingest/web', { key: chat, body: { url } });
    expect([r.status, r.body.error]).toEqual([400, expect.stringMatching(/private|loopback/)]);
  }
  expect((await h.req('POST', '/v1/ingest/web', { key: chat, body: { url: 'ftp://example.com/x' } })).status).toBe(400);
});

test('health reports the active knowledge search mode', async () => {
  const r = await pollUntil(
    () => h.req('GET', '/v1/health'),
    (x) => x.status === 200,
    15_000,
  );
  expect(r.body.knowledge).toEqual({ search_mode: 'fts', vector_extension: false, embeddings: false });
});
