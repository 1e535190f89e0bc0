import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// OpenAI's Files API (/v1/files) against the real database, and file ids in chat and responses, whose text or image
// reaches a fake OpenAI-compatible upstream.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

const UPLOAD_LIMIT = 64 * 1024;
const TENANT_LIMIT = 100 * 1024;

withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    resetEach: { reply: 'ok' },
    env: { SVC_UPLOAD_LIMIT: String(UPLOAD_LIMIT), SVC_FILES_TENANT_LIMIT: String(TENANT_LIMIT) },
  },
  (up) => {
    ({ fake, h, key } = up);
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);

/** A multipart upload as a browser or curl sends it. */
function upload(fields: Record<string, string>, file?: { name: string; bytes: Buffer }, k = key) {
  const form = new FormData();
  for (const [n, v] of Object.entries(fields)) form.append(n, v);
  if (file) form.append('file', new Blob([new Uint8Array(file.bytes)]), file.name);
  return fetch(`${h.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${k}` }, body: form });
}
const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
const notes = Buffer.from('# Launch notes\n\nThe launch code word is PERIWINKLE.\n');

describe('/v1/files', () => {
  test('upload, retrieve, list, content and delete with the official SDK, each answer in OpenAI’s contract', async () => {
    const created = await client.files.create({ file: await toFile(notes, 'notes.md'), purpose: 'user_data' });
    expect(contractErrors('OpenAIFile', created)).toEqual([]);
    expect(created).toMatchObject({ object: 'file', bytes: notes.length, filename: 'notes.md', purpose: 'user_data' });
    expect(created.id).toMatch(/^file-/);
    expect(created.expires_at).toBeUndefined();

    expect(await client.files.retrieve(created.id)).toEqual(created);
    const page = await client.files.list();
    expect(page.data.map((f) => f.id)).toContain(created.id);
    const raw = await h.req('GET', '/v1/files', { key });
    expect(contractErrors('ListFilesResponse', raw.body)).toEqual([]);

    const content = await client.files.content(created.id);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(content.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''notes.md");
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await content.arrayBuffer())).toEqual(notes);

    const deleted = await client.files.delete(created.id);
    expect(contractErrors('DeleteFileResponse', deleted)).toEqual([]);
    expect(deleted).toEqual({ id: created.id, object: 'file', deleted: true });
    expect((await h.req('GET', `/v1/files/${created.id}`, { key })).status).toBe(404);
    expect((await h.req('GET', `/v1/files/${created.id}/content`, { key })).status).toBe(404);
    expect((await h.req('DELETE', `/v1/files/${created.id}`, { key })).status).toBe(404);
  });

  test('list: newest first, limit and has_more, after as a cursor, asc, purpose; another tenant sees none', async () => {
    const k = (await h.key(['runtime:chat'])).apiKey;
    const ids: string[] = [];
    for (const [i, purpose] of ['user_data', 'batch', 'user_data'].entries()) {
      const r = await upload({ purpose }, { name: `f${i}.txt`, bytes: Buffer.from(`file ${i}`) }, k);
      expect(r.status).toBe(200);
      ids.push(((await r.json()) as { id: string }).id);
    }
    const list = (q: string) => h.req('GET', `/v1/files${q}`, { key: k }).then((r) => r.body);
    const first = await list('?limit=2');
    expect(first.data.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    expect(first).toMatchObject({ has_more: true, first_id: ids[2], last_id: ids[1] });
    const rest = await list(`?limit=2&after=${first.last_id}`);
    expect(rest.data.map((f: { id: string }) => f.id)).toEqual([ids[0]]);
    expect(rest.has_more).toBe(false);
    expect((await list('?order=asc')).data.map((f: { id: string }) => f.id)).toEqual(ids);
    expect((await list('?purpose=batch')).data.map((f: { id: string }) => f.id)).toEqual([ids[1]]);
    // The SDK's auto-pagination walks every page by `after`.
    const c = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: k, maxRetries: 0 });
    const walked: string[] = [];
    for await (const f of c.files.list({ limit: 1 })) walked.push(f.id);
    expect(walked).toEqual([...ids].reverse());
    expect((await h.req('GET', '/v1/files', { key })).body.data.map((f: { id: string }) => f.id)).not.toContain(ids[0]);
    expect((await h.req('GET', `/v1/files/${ids[0]}`, { key })).status).toBe(404);
    expect((await h.req('GET', `/v1/files/${ids[0]}/content`, { key })).status).toBe(404);
    expect((await h.req('DELETE', `/v1/files/${ids[0]}`, { key })).status).toBe(404);

    const bad = await h.req('GET', '/v1/files?limit=0&order=sideways&after=nope', { key: k });
    expect(bad.status).toBe(400);
    expect(paths(bad.body)).toEqual(['query.after', 'query.limit', 'query.order']);
    const unknown = await h.req('GET', '/v1/files?after=file-unknown', { key: k });
    expect(unknown.status).toBe(400);
    expect(paths(unknown.body)).toEqual(['query.after']);
  });

  test('expires_after sets expires_at; a path and control characters in the name are not kept', async () => {
    // Written by hand: a client library would escape the name's control characters itself.
    const boundary = 'svc-boundary-1';
    const part = (headers: string, body: string) => `--${boundary}\r\n${headers}\r\n\r\n${body}\r\n`;
    const raw =
      part('Content-Disposition: form-data; name="purpose"', 'user_data') +
      part('Content-Disposition: form-data; name="expires_after[anchor]"', 'created_at') +
      part('Content-Disposition: form-data; name="expires_after[seconds]"', '3600') +
      part(
        'Content-Disposition: form-data; name="file"; filename="../../etc/pa\u0007ss\twd.txt"\r\nContent-Type: text/plain',
        'x',
      ) +
      `--${boundary}--\r\n`;
    const r = await fetch(`${h.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: raw,
    });
    expect({ status: r.status, body: r.status === 200 ? '' : await r.text() }).toEqual({ status: 200, body: '' });
    const f = (await r.json()) as { expires_at: number; created_at: number; filename: string };
    expect(f.expires_at - f.created_at).toBe(3600);
    expect(f.filename).toBe('pa ss wd.txt');
    expect(contractErrors('OpenAIFile', f)).toEqual([]);
  });

  test('refusals: fields named, not multipart 415, over the file limit and over the tenant’s total 413', async () => {
    const k = (await h.key(['runtime:chat'])).apiKey;
    const noPurpose = await upload({}, { name: 'a.txt', bytes: Buffer.from('a') }, k);
    expect(noPurpose.status).toBe(400);
    expect(paths((await noPurpose.json()) as never)).toEqual(['body.purpose']);
    const badFields = await upload(
      { purpose: 'telepathy', 'expires_after[anchor]': 'last_used', 'expires_after[seconds]': '60' },
      { name: 'a.txt', bytes: Buffer.from('a') },
      k,
    );
    expect(badFields.status).toBe(400);
    expect(paths((await badFields.json()) as never)).toEqual([
      'body.expires_after.anchor',
      'body.expires_after.seconds',
      'body.purpose',
    ]);
    expect((await upload({ purpose: 'user_data' }, undefined, k)).status).toBe(400);
    const json = await h.req('POST', '/v1/files', { key: k, body: { purpose: 'user_data' } });
    expect(json.status).toBe(415);

    const big = await upload({ purpose: 'user_data' }, { name: 'big.bin', bytes: Buffer.alloc(UPLOAD_LIMIT + 1) }, k);
    expect(big.status).toBe(413);
    const part = Buffer.alloc(60 * 1024, 1);
    const one = await upload({ purpose: 'user_data' }, { name: 'one.bin', bytes: part }, k);
    expect(one.status).toBe(200);
    const two = await upload({ purpose: 'user_data' }, { name: 'two.bin', bytes: part }, k);
    expect(two.status).toBe(413);
    expect(((await two.json()) as { error: string }).error).toMatch(/SVC_FILES_TENANT_LIMIT/);
    // Another tenant has its own allowance; after a delete, this one's fits again.
    expect((await upload({ purpose: 'user_data' }, { name: 'two.bin', bytes: part })).status).toBe(200);
    const id = ((await one.json()) as { id: string }).id;
    expect((await h.req('DELETE', `/v1/files/${id}`, { key: k })).status).toBe(200);
    expect((await upload({ purpose: 'user_data' }, { name: 'two.bin', bytes: part }, k)).status).toBe(200);
  });
});

describe('file ids in chat and responses', () => {
  test('a chat file part by file_id: the file’s text reaches the lane under its name', async () => {
    const f = await client.files.create({ file: await toFile(notes, 'notes.md'), purpose: 'user_data' });
    const res = await client.chat.completions.create({
      model: 'mid',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is the code word?' },
            { type: 'file', file: { file_id: f.id } },
          ],
        },
      ],
    });
    expect(res.choices[0].message.content).toBe('ok');
    const sent = fake.chats.at(-1)!.body.messages.at(-1).content as string;
    expect(sent).toContain('What is the code word?');
    expect(sent).toContain('File "notes.md":');
    expect(sent).toContain('PERIWINKLE');
  });

  test('responses: input_file and input_image by file_id (the image checked and sent as a data URL)', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer();
    const img = await client.files.create({ file: await toFile(png, 'red.png'), purpose: 'vision' });
    const doc = await client.files.create({ file: await toFile(notes, 'notes.md'), purpose: 'user_data' });
    const res = await client.responses.create({
      model: 'mid',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Describe both.' },
            { type: 'input_image', file_id: img.id, detail: 'low' },
            { type: 'input_file', file_id: doc.id },
          ],
        },
      ],
    });
    expect(res.status).toBe('completed');
    const parts = fake.chats.at(-1)!.body.messages.at(-1).content as Array<{ type: string; [k: string]: any }>;
    const image = parts.find((p) => p.type === 'image_url')!;
    // Loaded as any image is: checked, metadata dropped, re-encoded.
    expect(image.image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);
    expect(image.image_url.detail).toBe('low');
    expect(parts.some((p) => p.type === 'text' && p.text.includes('PERIWINKLE'))).toBe(true);
    // The stored input keeps what the model got: the image as data, the file as its text.
    const items = await h.req('GET', `/v1/responses/${res.id}/input_items`, { key });
    const content = items.body.data[0].content;
    expect(content[1]).toMatchObject({
      type: 'input_image',
      image_url: expect.stringMatching(/^data:image\/png;base64,/),
    });
    expect(content[1].file_id).toBeUndefined();
    expect(content[2]).toMatchObject({ type: 'input_text' });
  });

  test('an unknown or another tenant’s file id is 404 naming the part; a malformed one 400; nothing goes upstream', async () => {
    const other = (await h.key(['runtime:chat'])).apiKey;
    const theirs = await upload({ purpose: 'user_data' }, { name: 'x.txt', bytes: Buffer.from('secret') }, other);
    const theirId = ((await theirs.json()) as { id: string }).id;
    for (const id of ['file-unknown', theirId]) {
      const chat = await h.req('POST', '/v1/chat/completions', {
        key,
        body: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'x' },
                { type: 'file', file: { file_id: id } },
              ],
            },
          ],
        },
      });
      expect(chat.status).toBe(404);
      expect(paths(chat.body)).toEqual(['body.messages.0.content.1.file']);
      const resp = await h.req('POST', '/v1/responses', {
        key,
        body: { input: [{ role: 'user', content: [{ type: 'input_image', file_id: id }] }] },
      });
      expect(resp.status).toBe(404);
      expect(paths(resp.body)).toEqual(['body.input.0.content.0.file_id']);
    }
    const malformed = await h.req('POST', '/v1/responses', {
      key,
      body: { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'abc', file_data: 'eA==' }] }] },
    });
    expect(malformed.status).toBe(400);
    expect(paths(malformed.body)).toEqual(expect.arrayContaining(['body.input.0.content.0.file_id']));
    // A file that is not an image, given as one: refused as any bad image is.
    const doc = await client.files.create({ file: await toFile(notes, 'notes.md'), purpose: 'user_data' });
    const notImage = await h.req('POST', '/v1/responses', {
      key,
      body: { input: [{ role: 'user', content: [{ type: 'input_image', file_id: doc.id }] }] },
    });
    expect(notImage.status).toBeGreaterThanOrEqual(400);
    expect(notImage.status).toBeLessThan(500);
    expect(fake.chats).toHaveLength(0);
  });
});
