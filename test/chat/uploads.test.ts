import { createHash } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { sql } from 'slonik';
import { z } from 'zod';
import { sweepExpiredOnce } from '../../activities/store/retention';
import type { Harness } from '../helpers/harness';
import { contractErrors } from '../helpers/openai-contract';
import { withHarness } from '../helpers/with-harness';

// OpenAI's Uploads API (/v1/uploads) against the real database: a file sent in parts, joined in the order the client
// lists them into a file of /v1/files; refusals, states, expiry and the retention sweep, tenants, the tenant's limit.

const KiB = 1024;
const MiB = 1024 * KiB;
const FILE_LIMIT = 2 * MiB;
const TENANT_LIMIT = 3 * MiB;

let h: Harness;
let key: string;
let otherKey: string;
let client: OpenAI;

withHarness(
  {
    scopes: ['runtime:chat'],
    other: true,
    env: { SVC_UPLOADS_FILE_LIMIT: String(FILE_LIMIT), SVC_FILES_TENANT_LIMIT: String(TENANT_LIMIT) },
  },
  (harness, k, other) => {
    h = harness;
    key = k;
    otherKey = other;
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);

const sdk = (k: string) => new OpenAI({ baseURL: `${h.url}/v1`, apiKey: k, maxRetries: 0 });
const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const one = <T extends z.ZodType>(t: T, q: ReturnType<typeof sql.unsafe>) =>
  h.db.oneFirst(sql.type(z.object({ v: t }))`SELECT (${q}) AS v`);
const partsOf = (uploadId: string) =>
  one(z.coerce.number(), sql.unsafe`SELECT count(*) FROM upload_parts WHERE upload_id = ${uploadId}`);
const filesOf = (k: string) => h.req('GET', '/v1/files', { key: k }).then((r) => r.body.data.length as number);

/** Creates an upload of `bytes` bytes. */
async function create(k: string, bytes: number, extra: Record<string, unknown> = {}) {
  const r = await h.req('POST', '/v1/uploads', {
    key: k,
    body: { filename: 'data.bin', purpose: 'user_data', bytes, mime_type: 'application/octet-stream', ...extra },
  });
  expect({ status: r.status, body: r.status === 200 ? null : r.body }).toEqual({ status: 200, body: null });
  return r.body as { id: string; status: string; bytes: number };
}

/** Sends a part as a browser or curl does (field `data` unless told otherwise). */
function part(k: string, uploadId: string, bytes: Buffer | null, field = 'data') {
  const form = new FormData();
  if (bytes) form.append(field, new Blob([new Uint8Array(bytes)]), 'blob');
  else form.append('note', 'no file');
  return fetch(`${h.url}/v1/uploads/${uploadId}/parts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k}` },
    body: form,
  });
}
async function partId(k: string, uploadId: string, bytes: Buffer): Promise<string> {
  const r = await part(k, uploadId, bytes);
  const body = (await r.json()) as { id: string };
  expect({ status: r.status, body: r.status === 200 ? null : body }).toEqual({ status: 200, body: null });
  return body.id;
}
const complete = (k: string, id: string, body: unknown) =>
  h.req('POST', `/v1/uploads/${id}/complete`, { key: k, body });

describe('/v1/uploads', () => {
  test('the SDK’s create, parts (sent at once, out of order) and complete make a file of /v1/files with the bytes in order', async () => {
    // Text of 1.5 MiB whose 1 MiB mark cuts a two-byte character: the type is told from the start of the joined file.
    const text = Buffer.from('a'.repeat(MiB - 1) + 'é' + 'b'.repeat(MiB / 2 - 1));
    const chunks = [text.subarray(0, 600 * KiB), text.subarray(600 * KiB, 1200 * KiB), text.subarray(1200 * KiB)];
    const created = await client.uploads.create({
      filename: '../notes.txt',
      purpose: 'user_data',
      bytes: text.length,
      mime_type: 'text/plain',
      expires_after: { anchor: 'created_at', seconds: 7200 },
    });
    expect(contractErrors('Upload', created)).toEqual([]);
    expect(created).toMatchObject({ object: 'upload', status: 'pending', bytes: text.length, filename: 'notes.txt' });
    expect(created.id).toMatch(/^upload_/);
    expect(created.expires_at - created.created_at).toBe(3600);
    expect(created.file).toBeNull();
    expect((created as unknown as { mime_type: string }).mime_type).toBe('text/plain');

    const parts = await Promise.all(
      [2, 0, 1].map(async (i) => ({
        i,
        part: await client.uploads.parts.create(created.id, { data: await toFile(chunks[i], `chunk${i}`) }),
      })),
    );
    for (const { part: p } of parts) {
      expect(contractErrors('UploadPart', p)).toEqual([]);
      expect(p).toMatchObject({ object: 'upload.part', upload_id: created.id });
      expect(p.id).toMatch(/^part_/);
    }
    const ids = parts.sort((a, b) => a.i - b.i).map((p) => p.part.id);
    const done = await client.uploads.complete(created.id, { part_ids: ids, md5: md5(text) });
    expect(contractErrors('Upload', done)).toEqual([]);
    expect(done).toMatchObject({ id: created.id, status: 'completed', bytes: text.length });
    const file = done.file!;
    expect(contractErrors('OpenAIFile', file)).toEqual([]);
    expect(file).toMatchObject({ object: 'file', bytes: text.length, filename: 'notes.txt', purpose: 'user_data' });
    expect(file.expires_at! - file.created_at).toBe(7200);

    // The file is one of /v1/files: retrieved, listed, its content the parts joined in part_ids order.
    expect(await client.files.retrieve(file.id)).toEqual(file);
    expect((await client.files.list()).data.map((f) => f.id)).toContain(file.id);
    const content = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
    expect(content.equals(text)).toBe(true);
    // Its type is told by its bytes, as /v1/files tells it; the parts are gone.
    expect(await one(z.string(), sql.unsafe`SELECT content_type FROM files WHERE id = ${file.id}`)).toBe('text/plain');
    expect(await partsOf(created.id)).toBe(0);
  });

  test('the joined file follows part_ids, not the order the parts came in; its type is told by its bytes', async () => {
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#0a0' } })
      .png()
      .toBuffer();
    const [a, b, c] = [png.subarray(0, 10), png.subarray(10, 100), png.subarray(100)];
    const u = await create(key, png.length, { filename: 'green.png', mime_type: 'image/png', purpose: 'vision' });
    const ids = { c: await partId(key, u.id, c), a: await partId(key, u.id, a), b: await partId(key, u.id, b) };
    // Listed in another order than the file's, the joined bytes would not be the image: the size still fits.
    const wrong = await h.req('POST', `/v1/uploads/${u.id}/complete`, {
      key,
      body: { part_ids: [ids.b, ids.a, ids.c], md5: md5(png) },
    });
    expect(wrong.status).toBe(400);
    expect(paths(wrong.body)).toEqual(['body.md5']);
    const done = await complete(key, u.id, { part_ids: [ids.a, ids.b, ids.c] });
    expect(done.status).toBe(200);
    const got = Buffer.from(await (await client.files.content(done.body.file.id)).arrayBuffer());
    expect(got.equals(png)).toBe(true);
    expect(await one(z.string(), sql.unsafe`SELECT content_type FROM files WHERE id = ${done.body.file.id}`)).toBe(
      'image/png',
    );

    // In reverse, a text file comes out reversed.
    const v = await create(key, 6);
    const p1 = await partId(key, v.id, Buffer.from('ab'));
    const p2 = await partId(key, v.id, Buffer.from('cd'));
    const p3 = await partId(key, v.id, Buffer.from('ef'));
    const rev = await complete(key, v.id, { part_ids: [p3, p2, p1] });
    expect(rev.status).toBe(200);
    const revContent = await h.req('GET', `/v1/files/${rev.body.file.id}/content`, { key });
    expect(revContent.text).toBe('efcdab');
  });

  test('create refusals: malformed JSON, wrong types and unknown fields named; bytes over the limits 413 naming it', async () => {
    const malformed = await h.req('POST', '/v1/uploads', {
      key,
      raw: '{"filename": "x",',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    const wrong = await h.req('POST', '/v1/uploads', {
      key,
      body: { filename: 7, purpose: 'telepathy', bytes: '10', mime_type: 'nope', colour: 'red' },
    });
    expect(wrong.status).toBe(400);
    expect(paths(wrong.body)).toEqual(
      expect.arrayContaining(['body.bytes', 'body.filename', 'body.mime_type', 'body.purpose']),
    );
    const bad = (body: Record<string, unknown>) =>
      h.req('POST', '/v1/uploads', {
        key,
        body: { filename: 'a', purpose: 'user_data', bytes: 10, mime_type: 'text/plain', ...body },
      });
    for (const [field, value] of [
      ['bytes', 0],
      ['bytes', 1.5],
      ['expires_after', { anchor: 'created_at', seconds: 60 }],
    ] as const) {
      const r = await bad({ [field]: value });
      expect({ field, status: r.status }).toEqual({ field, status: 400 });
      expect(paths(r.body)[0]).toMatch(new RegExp(`^body\\.${field}`));
    }
    expect((await bad({ colour: 'red' })).status).toBe(400);
    expect((await bad({ mime_type: 'text/plain; charset=utf-8' })).status).toBe(200);
    const over = await bad({ bytes: FILE_LIMIT + 1 });
    expect(over.status).toBe(413);
    expect(paths(over.body)).toEqual(['body.bytes']);
    expect(over.body.error).toMatch(/SVC_UPLOADS_FILE_LIMIT/);
    expect((await bad({ bytes: FILE_LIMIT })).status).toBe(200);
    const json = await h.req('POST', '/v1/uploads', {
      key,
      raw: 'filename=a',
      headers: { 'content-type': 'text/plain' },
    });
    expect(json.status).toBe(415);
  });

  test('part refusals: not multipart 415, no data or an empty one 400, over the part limit 413, unknown ids', async () => {
    const u = await create(key, 100);
    const notForm = await h.req('POST', `/v1/uploads/${u.id}/parts`, { key, body: { data: 'abc' } });
    expect(notForm.status).toBe(415);
    const noData = await part(key, u.id, null);
    expect(noData.status).toBe(400);
    expect(paths((await noData.json()) as never)).toEqual(['body.data']);
    const wrongField = await part(key, u.id, Buffer.from('x'), 'file');
    expect(wrongField.status).toBe(400);
    const empty = await part(key, u.id, Buffer.alloc(0));
    expect(empty.status).toBe(400);
    const big = await part(key, u.id, Buffer.alloc(FILE_LIMIT + 1, 1));
    expect(big.status).toBe(413);
    expect((await part(key, 'upload_unknown1', Buffer.from('x'))).status).toBe(404);
    const malformedId = await part(key, 'nope', Buffer.from('x'));
    expect(malformedId.status).toBe(400);
    expect(await partsOf(u.id)).toBe(0);
    expect((await part(key, u.id, Buffer.from('x'))).status).toBe(200);
  });

  test('complete refusals name the part id, the sizes or md5, and leave the upload pending with its parts', async () => {
    const u = await create(key, 10);
    const p1 = await partId(key, u.id, Buffer.from('01234'));
    const p2 = await partId(key, u.id, Buffer.from('56789'));
    const elsewhere = await create(key, 5);
    const p3 = await partId(key, elsewhere.id, Buffer.from('abcde'));
    const theirs = await create(otherKey, 5);
    const p4 = await partId(otherKey, theirs.id, Buffer.from('abcde'));
    const files = await filesOf(key);

    const cases: Array<[unknown, string[], RegExp?]> = [
      [{ part_ids: [p1, 'part_unknown'] }, ['body.part_ids.1']],
      [{ part_ids: [p1, p2, p1] }, ['body.part_ids.2']],
      [{ part_ids: [p3, p1, p2] }, ['body.part_ids.0']],
      [{ part_ids: [p1, p4] }, ['body.part_ids.1']],
      [{ part_ids: [p1] }, ['body.part_ids'], /5 bytes.*10 bytes/],
      [{ part_ids: [p1, p2], md5: md5(Buffer.from('0123456789x')) }, ['body.md5']],
      [{ part_ids: [p1, p2], md5: 'xyz' }, ['body.md5']],
      [{ part_ids: [] }, ['body.part_ids']],
      [{ part_ids: [p1, 'not a part'] }, ['body.part_ids.1']],
      [{}, ['body.part_ids']],
      [{ part_ids: [p1, p2], extra: true }, ['body']],
    ];
    for (const [body, fields, message] of cases) {
      const r = await complete(key, u.id, body);
      expect({ body, status: r.status, fields: paths(r.body) }).toEqual({ body, status: 400, fields });
      if (message) expect(r.body.error).toMatch(message);
    }
    const malformed = await h.req('POST', `/v1/uploads/${u.id}/complete`, {
      key,
      raw: '{"part_ids": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    // Nothing was made (the md5 refusal came after the insert, rolled back); the parts are all still there.
    expect(await filesOf(key)).toBe(files);
    expect(await partsOf(u.id)).toBe(2);
    const done = await complete(key, u.id, { part_ids: [p1, p2], md5: md5(Buffer.from('0123456789')).toUpperCase() });
    expect(done.status).toBe(200);
    expect(await filesOf(key)).toBe(files + 1);
    // The other upload's part was not taken.
    expect(await partsOf(elsewhere.id)).toBe(1);
  });

  test('states: completed and cancelled uploads refuse parts, completion and cancel, naming the status', async () => {
    const u = await create(key, 3);
    const p = await partId(key, u.id, Buffer.from('abc'));
    expect((await complete(key, u.id, { part_ids: [p] })).status).toBe(200);
    const again = await complete(key, u.id, { part_ids: [p] });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/completed/);
    const late = await part(key, u.id, Buffer.from('d'));
    expect(late.status).toBe(400);
    expect(((await late.json()) as { error: string }).error).toMatch(/completed/);
    expect((await h.req('POST', `/v1/uploads/${u.id}/cancel`, { key })).status).toBe(400);

    const c = await create(key, 3);
    const q = await partId(key, c.id, Buffer.from('abc'));
    const cancelled = await sdk(key).uploads.cancel(c.id);
    expect(contractErrors('Upload', cancelled)).toEqual([]);
    expect(cancelled).toMatchObject({ id: c.id, status: 'cancelled', file: null });
    expect(await partsOf(c.id)).toBe(0);
    for (const r of [
      await complete(key, c.id, { part_ids: [q] }),
      await h.req('POST', `/v1/uploads/${c.id}/cancel`, { key }),
    ]) {
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/cancelled/);
    }
    const afterCancel = await part(key, c.id, Buffer.from('abc'));
    expect(afterCancel.status).toBe(400);
    expect(((await afterCancel.json()) as { error: string }).error).toMatch(/cancelled/);
  });

  test('expiry: an expired upload refuses parts and completion; the retention sweep removes its parts, later its row', async () => {
    const k = (await h.key(['runtime:chat'])).apiKey;
    const expired = await create(k, 4);
    const e1 = await partId(k, expired.id, Buffer.from('ab'));
    await partId(k, expired.id, Buffer.from('cd'));
    const old = await create(k, 2);
    await partId(k, old.id, Buffer.from('zz'));
    const live = await create(k, 2);
    await partId(k, live.id, Buffer.from('ok'));
    await h.db.query(sql.unsafe`UPDATE uploads SET expires_at = now() - interval '1 minute' WHERE id = ${expired.id}`);
    await h.db.query(sql.unsafe`UPDATE uploads SET expires_at = now() - interval '2 days' WHERE id = ${old.id}`);

    const swept = await sweepExpiredOnce(h.db);
    expect(swept.uploadParts).toBeGreaterThanOrEqual(3);
    expect(swept.uploads).toBeGreaterThanOrEqual(1);
    expect(await partsOf(expired.id)).toBe(0);
    expect(await partsOf(live.id)).toBe(1);
    // Kept a day, so a late client is told it expired; older ones are gone.
    const refused = await complete(k, expired.id, { part_ids: [e1] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/expired/);
    const latePart = await part(k, expired.id, Buffer.from('ef'));
    expect(latePart.status).toBe(400);
    expect(((await latePart.json()) as { error: string }).error).toMatch(/expired/);
    expect((await h.req('POST', `/v1/uploads/${expired.id}/cancel`, { key: k })).status).toBe(400);
    expect((await h.req('POST', `/v1/uploads/${old.id}/cancel`, { key: k })).status).toBe(404);

    // The tenant's own next write removes its expired uploads' parts too (no sweep needed).
    const next = await create(k, 2);
    await partId(k, next.id, Buffer.from('xy'));
    await h.db.query(sql.unsafe`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = ${next.id}`);
    await partId(k, live.id, Buffer.from('!!'));
    expect(await partsOf(next.id)).toBe(0);
  });

  test('another tenant’s upload is 404 on every route; its parts stay its own', async () => {
    const theirs = await create(otherKey, 2);
    const p = await partId(otherKey, theirs.id, Buffer.from('hi'));
    expect((await part(key, theirs.id, Buffer.from('x'))).status).toBe(404);
    expect((await complete(key, theirs.id, { part_ids: [p] })).status).toBe(404);
    expect((await h.req('POST', `/v1/uploads/${theirs.id}/cancel`, { key })).status).toBe(404);
    expect(await partsOf(theirs.id)).toBe(1);
    const done = await complete(otherKey, theirs.id, { part_ids: [p] });
    expect(done.status).toBe(200);
    expect((await h.req('GET', `/v1/files/${done.body.file.id}`, { key })).status).toBe(404);
  });

  test('SVC_FILES_TENANT_LIMIT counts pending parts with files: parts and /v1/files uploads past it are 413; completion checks it', async () => {
    const { apiKey: k, tenantId } = await h.key(['runtime:chat']);
    const big = Buffer.alloc(MiB, 7);
    const u1 = await create(k, 2 * MiB);
    const a = await partId(k, u1.id, big);
    const b = await partId(k, u1.id, big);
    const u2 = await create(k, 2 * MiB);
    await partId(k, u2.id, big); // 3 MiB held in parts: the limit
    const over = await part(k, u2.id, Buffer.from('x'));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: string }).error).toMatch(/SVC_FILES_TENANT_LIMIT/);
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append('file', new Blob(['x']), 'x.txt');
    const file = await fetch(`${h.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}` },
      body: form,
    });
    expect(file.status).toBe(413);
    // Another tenant has its own allowance.
    expect((await part(key, (await create(key, 1)).id, Buffer.from('x'))).status).toBe(200);

    // Parts becoming a file are not counted twice: u1 completes at the limit.
    expect((await complete(k, u1.id, { part_ids: [a, b] })).status).toBe(200);
    expect((await h.req('POST', `/v1/uploads/${u2.id}/cancel`, { key: k })).status).toBe(200);

    // A file the limit does not hold back (a batch's output) fills the room: the completion is refused, kept pending.
    const u3 = await create(k, MiB);
    const c = await partId(k, u3.id, big);
    await h.db.query(sql.unsafe`
      INSERT INTO files (id, tenant_id, filename, purpose, content_type, size_bytes, bytes)
      VALUES ('file-batchoutput1', ${tenantId}, 'out.jsonl', 'batch_output', 'application/jsonl', ${MiB}, '\\x00'::bytea)`);
    const full = await complete(k, u3.id, { part_ids: [c] });
    expect(full.status).toBe(413);
    expect(full.body.error).toMatch(/SVC_FILES_TENANT_LIMIT/);
    expect(await partsOf(u3.id)).toBe(1);
    expect((await h.req('DELETE', '/v1/files/file-batchoutput1', { key: k })).status).toBe(200);
    const done = await complete(k, u3.id, { part_ids: [c] });
    expect(done.status).toBe(200);
    expect(done.body.file.bytes).toBe(MiB);
  });

  test('a create retried with the same Idempotency-Key answers the same upload', async () => {
    const body = { filename: 'a.txt', purpose: 'user_data', bytes: 5, mime_type: 'text/plain' };
    const headers = { 'Idempotency-Key': 'upload-retry-1' };
    const first = await h.req('POST', '/v1/uploads', { key, body, headers });
    const second = await h.req('POST', '/v1/uploads', { key, body, headers });
    expect(first.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    const third = await h.req('POST', '/v1/uploads', { key, body, headers: { 'Idempotency-Key': 'upload-retry-2' } });
    expect(third.body.id).not.toBe(first.body.id);
  });
});
