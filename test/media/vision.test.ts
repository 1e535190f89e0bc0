import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../schema/config';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { startExtraApp } from '../helpers/extra-app';

const TMP = mkdtempSync(path.join(os.tmpdir(), 'svc-vision-'));
const ROOT = path.join(TMP, 'root');
mkdirSync(ROOT);
const ANSWER = JSON.stringify({ description: 'A red square.', tags: ['red', 'square'] });

let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    env: { SVC_IMAGE_ROOT: ROOT, SVC_ALLOW_PRIVATE_FETCH: 'true' },
    resetEach: { reply: ANSWER },
  },
  (up) => ({ fake, h, key } = up),
);

let jpeg: Buffer; // 3000x1000 with EXIF
let images: http.Server;
let imagesUrl = '';
let imageGets = 0;

beforeAll(async () => {
  jpeg = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#c00' } })
    .jpeg()
    .withExif({ IFD0: { Copyright: 'secret-exif-marker', Artist: 'someone' } })
    .toBuffer();
  writeFileSync(path.join(ROOT, 'red.jpg'), jpeg);
  writeFileSync(path.join(TMP, 'outside.jpg'), jpeg);
  symlinkSync(path.join(TMP, 'outside.jpg'), path.join(ROOT, 'escape.jpg'));
  writeFileSync(path.join(ROOT, 'huge.bin'), Buffer.alloc(11 * 1024 * 1024, 0xff));
  images = http.createServer((req, res) => {
    imageGets++;
    if (req.url === '/red.jpg') return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg);
    if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      return res.end(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(11 * 1024 * 1024)]));
    }
    if (req.url === '/text') return res.writeHead(200, { 'content-type': 'image/png' }).end('not an image at all');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => images.listen(0, '127.0.0.1', () => r()));
  imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => images.close(() => r())));

const analyze = (body: unknown, k = key) => h.req('POST', '/v1/vision/analyze', { key: k, body });
const sentImage = () => {
  const content = fake.chats.at(-1)!.body.messages[1].content as Array<{ type: string; image_url?: { url: string } }>;
  const url = content.find((c) => c.type === 'image_url')!.image_url!.url;
  return { url, bytes: Buffer.from(url.split(',')[1], 'base64') };
};
const fields = (res: { body: { details?: Array<{ path: string }> } }) => (res.body.details ?? []).map((d) => d.path);

const appWith = (config: Partial<Config>) => startExtraApp(h, { config });
const postTo = async (url: string, body: unknown) => {
  const res = await fetch(`${url}/v1/vision/analyze`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { error: string; details?: Array<{ path: string }> } };
};

test('base64 JPEG: normalised (EXIF stripped, longest side 2048) before the call; answer parsed; JSON schema requested', async () => {
  const res = await analyze({ image_base64: jpeg.toString('base64'), prompt: 'What colour?' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    description: 'A red square.',
    tags: ['red', 'square'],
    model: 'svc-vision',
    image_sha256: createHash('sha256').update(jpeg).digest('hex'),
  });
  const req = fake.chats.at(-1)!.body;
  expect(req.response_format.type).toBe('json_schema');
  expect(req.messages[1].content[0]).toEqual({ type: 'text', text: 'What colour?' });
  const { url, bytes } = sentImage();
  expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
  const meta = await sharp(bytes).metadata();
  expect([meta.width, meta.height]).toEqual([2048, 683]);
  expect(meta.exif).toBeUndefined();
  expect(bytes.includes(Buffer.from('secret-exif-marker'))).toBe(false);
});

test('image_url is fetched by the service (the provider gets bytes, not the URL); WebP and GIF accepted', async () => {
  const before = imageGets;
  const res = await analyze({ image_url: `${imagesUrl}/red.jpg` });
  expect(res.status).toBe(200);
  expect(imageGets).toBe(before + 1);
  expect(JSON.stringify(fake.chats.at(-1)!.body)).not.toContain(imagesUrl);
  expect(sentImage().url.startsWith('data:image/jpeg;base64,')).toBe(true);
  for (const fmt of ['webp', 'gif'] as const) {
    const img = sharp({ create: { width: 40, height: 30, channels: 3, background: '#0c0' } });
    const b = await img[fmt]().toBuffer();
    const r = await analyze({ image_base64: b.toString('base64') });
    expect({ fmt, status: r.status }).toEqual({ fmt, status: 200 });
  }
});

test('image_path inside SVC_IMAGE_ROOT works; traversal, absolute outside path, symlink escape and missing files are 400 naming image_path', async () => {
  expect((await analyze({ image_path: 'red.jpg' })).status).toBe(200);
  for (const p of ['../outside.jpg', path.join(TMP, 'outside.jpg'), 'escape.jpg', 'nope.jpg', 'a/../../outside.jpg']) {
    const res = await analyze({ image_path: p });
    expect({ p, status: res.status, fields: fields(res) }).toEqual({ p, status: 400, fields: ['body.image_path'] });
  }
});

test('SVC_IMAGE_ROOT unset: any image_path is 400', async () => {
  const app = await appWith({ media: { ...h.config.media, imageRoot: undefined } });
  try {
    const res = await postTo(app.url, { image_path: 'red.jpg' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/SVC_IMAGE_ROOT/);
  } finally {
    await app.close();
  }
});

test('private URL refused by the fetch guard (400 naming image_url), before any request reaches it', async () => {
  const app = await appWith({ allowPrivateFetch: false });
  const before = imageGets;
  try {
    for (const u of [`${imagesUrl}/red.jpg`, 'http://169.254.169.254/latest/meta-data', 'file:///etc/passwd']) {
      const res = await postTo(app.url, { image_url: u });
      expect({ u, status: res.status, fields: fields(res) }).toEqual({ u, status: 400, fields: ['body.image_url'] });
    }
    expect(imageGets).toBe(before);
  } finally {
    await app.close();
  }
});

test('oversize images are 413 (URL and path); wrong type 415 (bytes, URL); no model call', async () => {
  const calls = fake.chats.length;
  expect((await analyze({ image_url: `${imagesUrl}/huge` })).status).toBe(413);
  expect((await analyze({ image_path: 'huge.bin' })).status).toBe(413);
  expect((await analyze({ image_base64: Buffer.from('%PDF-1.4 not an image').toString('base64') })).status).toBe(415);
  expect((await analyze({ image_url: `${imagesUrl}/text` })).status).toBe(415);
  // Right magic bytes, broken body: 415 too, never 500.
  expect(
    (await analyze({ image_base64: Buffer.concat([jpeg.subarray(0, 20), Buffer.alloc(50)]).toString('base64') }))
      .status,
  ).toBe(415);
  expect(fake.chats.length).toBe(calls);
});

test('exactly one input: two or none are 400 naming them', async () => {
  const two = await analyze({ image_url: `${imagesUrl}/red.jpg`, image_base64: jpeg.toString('base64') });
  expect(two.status).toBe(400);
  expect(fields(two).sort()).toEqual(['body.image_base64', 'body.image_url']);
  const none = await analyze({ prompt: 'hi' });
  expect(none.status).toBe(400);
  expect(fields(none).sort()).toEqual(['body.image_base64', 'body.image_path', 'body.image_url']);
  expect((await analyze({ image_base64: 'not base64!!' })).status).toBe(400);
});

test('save_memory stores a "seen" fragment with the image hash, for this tenant only', async () => {
  const res = await analyze({ image_path: 'red.jpg', save_memory: true });
  expect(res.status).toBe(200);
  expect(res.body.memory_id).toMatch(/^mem_/);
  const row = await h.db.one(sql.type(
    z.object({
      tenant_id: z.string(),
      provenance: z.string(),
      content: z.string(),
      image_sha256: z.string().nullable(),
    }),
  )`
    SELECT tenant_id, provenance, content, image_sha256 FROM memories WHERE id = ${res.body.memory_id}`);
  expect(row).toMatchObject({ provenance: 'seen', image_sha256: createHash('sha256').update(jpeg).digest('hex') });
  expect(row.content).toContain('A red square.');
  const other = await h.key(['runtime:chat']);
  expect(row.tenant_id).not.toBe(other.tenantId);
  const listed = await h.req('GET', '/v1/memory', { key: other.apiKey });
  expect(JSON.stringify(listed.body ?? {})).not.toContain(res.body.memory_id);
});

test('upstream faults map as in chat: 500 → 502, 429 → 429 with Retry-After; unreadable answer → 502', async () => {
  fake.script({ status: 500 });
  expect((await analyze({ image_path: 'red.jpg' })).status).toBe(502);
  fake.script({ status: 429, retryAfter: '7' });
  const limited = await analyze({ image_path: 'red.jpg' });
  expect(limited.status).toBe(429);
  expect(limited.headers.get('retry-after')).toBe('7');
  fake.script({ reply: 'I think it is red.' });
  expect((await analyze({ image_path: 'red.jpg' })).status).toBe(502);
});

test('scope runtime:chat required', async () => {
  const emailOnly = (await h.key(['runtime:email:send'])).apiKey;
  expect((await analyze({ image_path: 'red.jpg' }, emailOnly)).status).toBe(403);
});
