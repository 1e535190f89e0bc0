import { sql } from 'slonik';
import { runSpacesCli } from '../../workers/spaces-command';
import { captureCli } from '../helpers/cli';
import { startHarness, type Harness } from '../helpers/harness';
import { upload } from './fixtures';

let h: Harness;
let a: { apiKey: string; tenantId: string };
let b: { apiKey: string; tenantId: string };
beforeAll(async () => {
  h = await startHarness();
  a = await h.key(['runtime:spaces', 'runtime:records']);
  b = await h.key(['runtime:spaces', 'runtime:records']);
});
afterAll(async () => h?.close());

const cli = (args: string[]) => captureCli(runSpacesCli, args, { DATABASE_URL: h.dbUrl });

test('create, list, upload into, list documents of, and delete a space (documents go with it)', async () => {
  const created = await h.req('POST', '/v1/spaces', {
    key: a.apiKey,
    body: { name: 'Handbook', description: 'Policies' },
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: 'Handbook', description: 'Policies', document_count: 0 });
  const id = created.body.id;
  const doc = await upload(h, `/v1/spaces/${id}/documents`, a.apiKey, {
    bytes: '# Holidays\n\n- Office closed on the first of May.\n',
  });
  expect(doc.status).toBe(201);
  expect(doc.body).toMatchObject({ space_id: id, media_type: 'text/markdown', title: 'Holidays' });
  const loose = await upload(h, '/v1/documents/upload', a.apiKey, {
    bytes: 'A document outside any space about holidays.',
  });
  const listed = await h.req('GET', `/v1/spaces/${id}/documents`, { key: a.apiKey });
  expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([doc.body.id]);
  const spaces = await h.req('GET', '/v1/spaces', { key: a.apiKey });
  expect(spaces.body.data).toEqual([expect.objectContaining({ id, document_count: 1 })]);
  const scoped = await h.req('GET', `/v1/enterprise/knowledge/search?q=holidays&space_id=${id}`, { key: a.apiKey });
  expect(scoped.body.data.map((x: { document_id: string }) => x.document_id)).toEqual([doc.body.id]);

  const del = await h.req('DELETE', `/v1/spaces/${id}`, { key: a.apiKey });
  expect(del.body).toEqual({ id, deleted: true, deleted_documents: 1 });
  expect((await h.req('GET', `/v1/documents/${doc.body.id}`, { key: a.apiKey })).status).toBe(404);
  expect((await h.req('GET', `/v1/documents/${loose.body.id}`, { key: a.apiKey })).status).toBe(200);
  expect((await h.req('GET', `/v1/spaces/${id}/documents`, { key: a.apiKey })).status).toBe(404);
  expect((await h.req('DELETE', `/v1/spaces/${id}`, { key: a.apiKey })).status).toBe(404);
});

test("another tenant's space answers 404 on every route and is never listed", async () => {
  const mine = await h.req('POST', '/v1/spaces', { key: a.apiKey, body: { name: 'Private' } });
  const id = mine.body.id;
  expect((await h.req('GET', '/v1/spaces', { key: b.apiKey })).body.data).toEqual([]);
  expect((await h.req('GET', `/v1/spaces/${id}/documents`, { key: b.apiKey })).status).toBe(404);
  expect((await upload(h, `/v1/spaces/${id}/documents`, b.apiKey, { bytes: 'hello' })).status).toBe(404);
  expect((await h.req('DELETE', `/v1/spaces/${id}`, { key: b.apiKey })).status).toBe(404);
  expect(
    (
      await h.req('POST', '/v1/ingest', {
        key: (await h.key(['runtime:chat'], { tenantId: b.tenantId })).apiKey,
        body: { text: 'x', space_id: id },
      })
    ).status,
  ).toBe(404);
  expect((await h.req('GET', `/v1/spaces/${id}/documents`, { key: a.apiKey })).status).toBe(200);
});

test('validation and scope: bad bodies are 400, keys without runtime:spaces are 403', async () => {
  expect((await h.req('POST', '/v1/spaces', { key: a.apiKey, body: { name: '' } })).status).toBe(400);
  expect((await h.req('POST', '/v1/spaces', { key: a.apiKey, body: { name: 7 } })).status).toBe(400);
  expect(
    (await h.req('POST', '/v1/spaces', { key: a.apiKey, raw: 'name=x', headers: { 'content-type': 'text/plain' } }))
      .status,
  ).toBe(415);
  expect((await h.req('DELETE', '/v1/spaces/bad%20id', { key: a.apiKey })).status).toBe(400);
  const records = (await h.key(['runtime:records'])).apiKey;
  const r = await h.req('GET', '/v1/spaces', { key: records });
  expect([r.status, r.body.scope]).toEqual([403, 'runtime:spaces']);
});

test('legacy spaces without an owner are hidden until the operator command assigns them', async () => {
  const t = await h.key(['runtime:spaces']);
  await h.db.query(sql.unsafe`INSERT INTO spaces (id, tenant_id, name, created_at) VALUES
    ('spc_legacy_one', NULL, 'Old wiki', now() - interval '2 days'), ('spc_legacy_two', NULL, 'Old drive', now() - interval '1 day')`);
  expect((await h.req('GET', '/v1/spaces', { key: t.apiKey })).body.data).toEqual([]);
  expect((await h.req('GET', '/v1/spaces/spc_legacy_one/documents', { key: t.apiKey })).status).toBe(404);

  const listed = await cli(['list-legacy']);
  expect(listed.out.legacy_spaces.map((s: { id: string }) => s.id)).toEqual(['spc_legacy_one', 'spc_legacy_two']);
  const dry = await cli(['migrate-legacy', '--tenant', t.tenantId, '--dry-run']);
  expect(dry.out).toEqual({ tenant_id: t.tenantId, dry_run: true, would_assign: ['spc_legacy_one', 'spc_legacy_two'] });
  expect((await h.req('GET', '/v1/spaces', { key: t.apiKey })).body.data).toEqual([]);

  const one = await cli(['migrate-legacy', '--tenant', t.tenantId, '--space', 'spc_legacy_one']);
  expect(one.out).toEqual({ tenant_id: t.tenantId, assigned: ['spc_legacy_one'], remaining_legacy: 1 });
  const rest = await cli(['migrate-legacy', '--tenant', t.tenantId]);
  expect(rest.out).toEqual({ tenant_id: t.tenantId, assigned: ['spc_legacy_two'], remaining_legacy: 0 });
  const again = await cli(['migrate-legacy', '--tenant', a.tenantId]);
  expect(again.out.assigned).toEqual([]);

  const now = await h.req('GET', '/v1/spaces', { key: t.apiKey });
  expect(now.body.data.map((s: { id: string }) => s.id)).toEqual(['spc_legacy_two', 'spc_legacy_one']);
  expect(
    (await h.req('GET', '/v1/spaces', { key: a.apiKey })).body.data.map((s: { id: string }) => s.id),
  ).not.toContain('spc_legacy_one');
});

test.each([
  [[]],
  [['frobnicate']],
  [['migrate-legacy']],
  [['migrate-legacy', '--tenant', 'ten_missing']],
  [['migrate-legacy', '--tenant']],
  [['list-legacy', '--bogus']],
])('bad arguments %p exit 2 with a usage line', async (args) => {
  const r = await cli(args);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/usage: npm run -s spaces/);
});

test('migrate-legacy refuses space ids that are not legacy', async () => {
  const mine = await h.req('POST', '/v1/spaces', { key: a.apiKey, body: { name: 'Owned' } });
  const r = await cli(['migrate-legacy', '--tenant', b.tenantId, '--space', mine.body.id]);
  expect(r.code).toBe(2);
  expect(r.err).toContain(mine.body.id);
  expect((await h.req('GET', `/v1/spaces/${mine.body.id}/documents`, { key: a.apiKey })).status).toBe(200);
});

test('a space deleted between the check and the write answers 404, not 500 (upload, learn)', async () => {
  // A trigger deletes the space right before the row referencing it is inserted: exactly the
  // window between requireSpace and the INSERT, made deterministic.
  await h.db.query(sql.unsafe`CREATE FUNCTION vanish_space() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN DELETE FROM spaces WHERE id = NEW.space_id AND name = 'vanishing'; RETURN NEW; END $$`);
  await h.db.query(
    sql.unsafe`CREATE TRIGGER vanish_documents BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION vanish_space()`,
  );
  await h.db.query(
    sql.unsafe`CREATE TRIGGER vanish_learn_jobs BEFORE INSERT ON learn_jobs FOR EACH ROW EXECUTE FUNCTION vanish_space()`,
  );
  // The tenant's documents and learning jobs, counted before and after the failed writes.
  const rowCounts = () =>
    h.db.one(sql.unsafe`SELECT
    (SELECT count(*)::int FROM documents WHERE tenant_id = ${a.tenantId}) AS documents,
    (SELECT count(*)::int FROM learn_jobs WHERE tenant_id = ${a.tenantId}) AS learn_jobs`);
  const before = await rowCounts();
  try {
    const s1 = await h.req('POST', '/v1/spaces', { key: a.apiKey, body: { name: 'vanishing' } });
    const up = await upload(h, `/v1/spaces/${s1.body.id}/documents`, a.apiKey, {
      bytes: 'A note about spaces that vanish while a document is written.',
    });
    expect(up.status).toBe(404);
    expect(JSON.stringify(up.body)).toContain(`Space ${s1.body.id} not found`);
    const s2 = await h.req('POST', '/v1/spaces', { key: a.apiKey, body: { name: 'vanishing' } });
    const learn = await h.req('POST', '/v1/enterprise/learn', {
      key: a.apiKey,
      body: { sources: [{ text: 'Learned into a vanishing space.' }], space_id: s2.body.id },
    });
    expect(learn.status).toBe(404);
    expect(JSON.stringify(learn.body)).toContain(`Space ${s2.body.id} not found`);
    // Nothing half-written: the failed transactions left no rows behind.
    expect(await rowCounts()).toEqual(before);
    // The check itself still works: a space that is simply gone is a 404 before any write.
    expect(
      (
        await h.req('POST', '/v1/enterprise/learn', {
          key: a.apiKey,
          body: { sources: [{ text: 'x' }], space_id: s1.body.id },
        })
      ).status,
    ).toBe(404);
  } finally {
    await h.db.query(sql.unsafe`DROP TRIGGER vanish_documents ON documents`);
    await h.db.query(sql.unsafe`DROP TRIGGER vanish_learn_jobs ON learn_jobs`);
    await h.db.query(sql.unsafe`DROP FUNCTION vanish_space()`);
  }
});
