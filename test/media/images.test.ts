import sharp from 'sharp';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../schema/config';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { openaiSchema } from '../helpers/openai-contract';
import { startExtraApp } from '../helpers/extra-app';

let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {} }, (up) => ({ fake, h, key } = up));

const generate = (body: unknown, k = key) => h.req('POST', '/v1/images/generations', { key: k, body });
const pathOf = (url: string) => new URL(url).pathname;
const validRequest = openaiSchema('CreateImageRequest');
const validResponse = openaiSchema('ImagesResponse');

const appWith = (config: Partial<Config>) => startExtraApp(h, { config });

test('the contract validator is real: it refuses a response without created and a request without prompt', () => {
  expect(validResponse({ data: [] })).toBe(false);
  expect(validRequest({ n: 1 })).toBe(false);
  expect(validRequest({ prompt: 'x', response_format: 'gif' })).toBe(false);
});

test('b64_json: request and response validate against CreateImageRequest / ImagesResponse; the upstream is asked for b64_json', async () => {
  const body = {
    prompt: 'A lighthouse at dusk',
    n: 1,
    size: '1024x1024',
    response_format: 'b64_json',
    model: 'dall-e-3',
    quality: 'hd',
    style: 'vivid',
  };
  expect(validRequest(body)).toBe(true);
  const res = await generate(body);
  expect(res.status).toBe(200);
  expect(validResponse(res.body)).toBe(true);
  expect(res.body.data).toHaveLength(1);
  expect(res.body.data[0].b64_json).toBe(FAKE_PNG_B64);
  expect(res.body.data[0].revised_prompt).toBe('fake: A lighthouse at dusk');
  const up = fake.requests.at(-1)!;
  expect(up.path).toBe('/v1/images/generations');
  expect(up.body).toMatchObject({
    prompt: 'A lighthouse at dusk',
    n: 1,
    size: '1024x1024',
    response_format: 'b64_json',
    model: 'dall-e-3',
  });
});

test('url (default): stored per tenant content-addressed, served at an unguessable link with the image bytes; expired link 404', async () => {
  const res = await generate({ prompt: 'Two boats' });
  expect(res.status).toBe(200);
  expect(validResponse(res.body)).toBe(true);
  const url: string = res.body.data[0].url;
  expect(url).toMatch(/\/v1\/images\/files\/[0-9a-z]{32}$/);
  const file = await fetch(h.url + pathOf(url));
  expect(file.status).toBe(200);
  expect(file.headers.get('content-type')).toBe('image/png');
  expect(file.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
  const bytes = Buffer.from(await file.arrayBuffer());
  expect(bytes.equals(Buffer.from(FAKE_PNG_B64, 'base64'))).toBe(true);
  expect((await sharp(bytes).metadata()).format).toBe('png');
  // Same bytes again: a new link, the same stored image.
  const again = await generate({ prompt: 'Two boats again' });
  expect(pathOf(again.body.data[0].url)).not.toBe(pathOf(url));
  const blobs = await h.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM image_blobs`);
  expect(blobs).toBe(1);
  // Unknown or expired links are 404.
  expect((await fetch(`${h.url}/v1/images/files/${'x'.repeat(32)}`)).status).toBe(404);
  const token = pathOf(url).split('/').at(-1)!;
  await h.db.query(sql.unsafe`UPDATE image_links SET expires_at = now() - interval '1 second' WHERE token = ${token}`);
  expect((await fetch(h.url + pathOf(url))).status).toBe(404);
  expect((await fetch(h.url + pathOf(again.body.data[0].url))).status).toBe(200);
});

test('images of different tenants are stored apart', async () => {
  const other = await h.key(['runtime:chat']);
  const res = await generate({ prompt: 'Shared bytes' }, other.apiKey);
  expect(res.status).toBe(200);
  const tenants = await h.db.anyFirst(
    sql.type(z.object({ tenant_id: z.string() }))`SELECT DISTINCT tenant_id FROM image_blobs`,
  );
  expect(tenants).toContain(other.tenantId);
  expect(tenants.length).toBeGreaterThanOrEqual(2);
});

test('n and size are checked against the lane (default: n ≤ 1, dall-e-3 sizes) with 400 naming the field; no call made', async () => {
  const calls = fake.requests.length;
  const many = await generate({ prompt: 'x', n: 3 });
  expect(many.status).toBe(400);
  expect(many.body.details.map((d: { path: string }) => d.path)).toEqual(['body.n']);
  const odd = await generate({ prompt: 'x', size: '333x333' });
  expect(odd.status).toBe(400);
  expect(odd.body.details.map((d: { path: string }) => d.path)).toEqual(['body.size']);
  expect((await generate({ prompt: 'x', n: 11 })).status).toBe(400);
  expect((await generate({ n: 1 })).status).toBe(400);
  expect((await generate({ prompt: 'x', response_format: 'gif' })).status).toBe(400);
  expect(fake.requests.length).toBe(calls);
});

test('upstream faults: 500 → 502, 429 → 429, answer without an image → 502; nothing stored', async () => {
  const before = await h.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM image_links`);
  fake.script({ status: 500 });
  expect((await generate({ prompt: 'x' })).status).toBe(502);
  fake.script({ status: 429, retryAfter: '3' });
  const limited = await generate({ prompt: 'x' });
  expect(limited.status).toBe(429);
  expect(limited.headers.get('retry-after')).toBe('3');
  fake.script({ reply: Buffer.from('not an image').toString('base64') });
  expect((await generate({ prompt: 'x' })).status).toBe(502);
  expect(await h.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM image_links`)).toBe(
    before,
  );
});

test('no provider configured → 503; scope runtime:chat required', async () => {
  const app = await appWith({ openai: { ...h.config.openai, baseUrl: undefined, apiKey: undefined } });
  try {
    const res = await fetch(`${app.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x' }),
    });
    expect(res.status).toBe(503);
  } finally {
    await app.close();
  }
  const emailOnly = (await h.key(['runtime:email:send'])).apiKey;
  expect((await generate({ prompt: 'x' }, emailOnly)).status).toBe(403);
});
