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
import { fields, type Harness } from '../helpers/harness';
import { startExtraApp } from '../helpers/extra-app';
import { contractErrors } from '../helpers/openai-contract';

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

describe('images in /v1/chat/completions messages (OpenAI image_url parts)', () => {
  const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    h.req('POST', '/v1/chat/completions', { key, headers, body: { model: 'svc-oracle', ...body } });
  const ask = (...parts: unknown[]) => ({ messages: [{ role: 'user', content: parts }] });
  const text = { type: 'text', text: 'What is in these?' };

  test('loaded as the vision route loads them and passed on as data URLs; the request stays in OpenAI’s contract', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 4, background: '#00f8' } })
      .png()
      .toBuffer();
    fake.script({ reply: 'A red band and a blue square.' });
    const gets = imageGets;
    const r = await chat(
      ask(
        text,
        { type: 'image_url', image_url: { url: `${imagesUrl}/red.jpg`, detail: 'low' } },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
      ),
      { 'x-session-id': `img-${Date.now()}` },
    );
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('A red band and a blue square.');
    expect(imageGets).toBe(gets + 1); // fetched by the service, not by the provider
    const sent = fake.chats.at(-1)!.body;
    const parts = sent.messages.at(-1).content as Array<{ type: string; text?: string; image_url?: any }>;
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url', 'image_url']);
    expect(parts[0].text).toBe('What is in these?');
    expect(parts[1].image_url.detail).toBe('low');
    expect(parts[1].image_url.url).toMatch(/^data:image\/jpeg;base64,/);
    const first = Buffer.from(parts[1].image_url.url.split(',')[1], 'base64');
    expect(await sharp(first).metadata()).toMatchObject({ width: 2048, height: 683 });
    expect(first.includes(Buffer.from('secret-exif-marker'))).toBe(false);
    expect(parts[2].image_url.url).toMatch(/^data:image\/png;base64,/);
    expect(contractErrors('CreateChatCompletionRequest', sent)).toEqual([]);
    // A session keeps the message's text.
    const stored = await h.req('GET', `/v1/sessions/${r.body.meta.session_id}`, { key });
    expect(stored.body.messages[0]).toMatchObject({ role: 'user', content: 'What is in these?' });
  });

  test.each([
    ['not an image', 415, 'unsupported_media_type', '/text'],
    ['over 10 MB', 413, 'payload_too_large', '/huge'],
  ])('an image URL %s is %i %s naming the part; nothing reaches the lane', async (_n, status, code, p) => {
    const before = fake.chats.length;
    const r = await chat(ask(text, { type: 'image_url', image_url: { url: `${imagesUrl}${p}` } }));
    expect([r.status, r.body.code]).toEqual([status, code]);
    expect(r.body.error).toMatch(/^body\.messages\.0\.content\.1\.image_url\.url: /);
    expect(fake.chats.length).toBe(before);
  });

  test('a private URL is refused by the fetch guard when the service does not allow private addresses', async () => {
    const app = await appWith({ allowPrivateFetch: false });
    try {
      const gets = imageGets;
      const res = await fetch(`${app.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(ask(text, { type: 'image_url', image_url: { url: `${imagesUrl}/red.jpg` } })),
      });
      const r = { status: res.status, body: (await res.json()) as { details?: Array<{ path: string }> } };
      expect(r.status).toBe(400);
      expect(fields(r)).toEqual(['body.messages.0.content.1.image_url.url']);
      expect(imageGets).toBe(gets);
    } finally {
      await app.close();
    }
  });

  test.each([
    [
      'an image on an assistant message',
      {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
        ],
      },
      'body.messages.1.content',
    ],
    [
      'a data URL that is not an image',
      ask({ type: 'image_url', image_url: { url: 'data:text/plain;base64,eA==' } }),
      'body.messages.0.content.0.image_url.url',
    ],
    [
      'nine images',
      ask(...Array.from({ length: 9 }, () => ({ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }))),
      'body.messages',
    ],
    [
      'an unknown part type',
      ask({ type: 'input_audio', input_audio: { data: 'eA==', format: 'wav' } }),
      'body.messages.0.content.0.type',
    ],
  ])('%s is 400 naming it', async (_n, body, path) => {
    const before = fake.chats.length;
    const r = await chat(body);
    expect([r.status, r.body.code]).toEqual([400, 'invalid_request']);
    expect(fields(r)).toEqual([path]);
    expect(fake.chats.length).toBe(before);
  });
});
