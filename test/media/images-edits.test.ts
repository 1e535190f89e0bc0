import { randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { openaiSchema } from '../helpers/openai-contract';

// OpenAI's image edits and variations (multipart) through the images lane, against a fake OpenAI-compatible provider
// that records the form it got.

let fake: FakeOpenAI;
let h: Harness;
let key: string;
let client: OpenAI;
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {} }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const validResponse = openaiSchema('ImagesResponse');
const png = (width: number, height: number, alpha = false) =>
  sharp({
    create: { width, height, channels: alpha ? 4 : 3, background: alpha ? { r: 0, g: 0, b: 0, alpha: 0 } : '#3366aa' },
  })
    .png()
    .toBuffer();
const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#aa6633' } })
    .jpeg()
    .toBuffer();
type Sent = { files: Array<{ field: string; type: string; size: number }>; [k: string]: unknown };
const sent = () => fake.requests.at(-1)!.body as Sent;

/** A multipart request to the app with these files and fields (`raw` fetch: the SDK would fix what we test). */
async function post(path: string, files: Array<[string, Buffer, string]>, fields: Record<string, string>, k = key) {
  const form = new FormData();
  for (const [field, bytes, name] of files) form.append(field, new Blob([new Uint8Array(bytes)]), name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${k}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}
const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path);

test('edit with the SDK: the image, a mask and the prompt reach the provider as a form; images answered as links', async () => {
  const image = await png(64, 64);
  const mask = await png(64, 64, true);
  const res = await client.images.edit({
    image: await toFile(image, 'photo.png', { type: 'image/png' }),
    mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    prompt: 'Add a red balloon',
    n: 1,
    size: '1024x1024',
  });
  expect(validResponse(res)).toBe(true);
  expect(res.data).toHaveLength(1);
  const file = await fetch(`${h.url}${new URL(res.data![0].url!).pathname}`);
  expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(FAKE_PNG_B64, 'base64'))).toBe(true);
  const got = sent();
  expect(fake.requests.at(-1)!.path).toBe('/v1/images/edits');
  expect(got).toMatchObject({ prompt: 'Add a red balloon', n: '1', size: '1024x1024', response_format: 'b64_json' });
  expect(got.files.map((f) => [f.field, f.type, f.size])).toEqual([
    ['image', 'image/png', image.length],
    ['mask', 'image/png', mask.length],
  ]);
});

test('several images go as image[]; JPEG and WebP are taken as they are; b64_json answered inline', async () => {
  const a = await jpeg(40, 30);
  const b = await sharp(await png(20, 20))
    .webp()
    .toBuffer();
  const res = await post(
    '/v1/images/edits',
    [
      ['image[]', a, 'a.jpg'],
      ['image[]', b, 'b.webp'],
    ],
    { prompt: 'Combine them', response_format: 'b64_json', output_format: 'webp', background: 'opaque' },
  );
  expect(res.status).toBe(200);
  expect(res.body.data[0].b64_json).toBe(FAKE_PNG_B64);
  expect(sent().files.map((f) => [f.field, f.type, f.size])).toEqual([
    ['image[]', 'image/jpeg', a.length],
    ['image[]', 'image/webp', b.length],
  ]);
  expect(sent()).toMatchObject({ output_format: 'webp', background: 'opaque' });
  // The order sent is kept even when the first file is much larger (its write to disk ends after the second's).
  const noise = await sharp(randomBytes(600 * 600 * 3), { raw: { width: 600, height: 600, channels: 3 } })
    .jpeg({ quality: 100 })
    .toBuffer();
  for (let i = 0; i < 3; i++) {
    const again = await post(
      '/v1/images/edits',
      [
        ['image[]', noise, 'big.jpg'],
        ['image[]', b, 'small.webp'],
      ],
      { prompt: 'Combine them' },
    );
    expect(again.status).toBe(200);
    expect(sent().files.map((f) => [f.type, f.size])).toEqual([
      ['image/jpeg', noise.length],
      ['image/webp', b.length],
    ]);
  }
});

test('variations of a square PNG with the SDK', async () => {
  const res = await client.images.createVariation({
    image: await toFile(await png(32, 32), 'square.png', { type: 'image/png' }),
    n: 1,
    size: '256x256',
    response_format: 'b64_json',
  });
  expect(validResponse(res)).toBe(true);
  expect(fake.requests.at(-1)!.path).toBe('/v1/images/variations');
  expect(sent()).toMatchObject({ n: '1', size: '256x256' });
});

test('refusals name the field; nothing reaches the provider; the provider’s failure is 502', async () => {
  const image = await png(64, 64);
  const before = fake.requests.length;
  const cases: Array<[string, Array<[string, Buffer, string]>, Record<string, string>, number, string]> = [
    ['/v1/images/edits', [['image', image, 'a.png']], {}, 400, 'body.prompt'],
    ['/v1/images/edits', [], { prompt: 'x' }, 400, 'body.image'],
    ['/v1/images/edits', [['image', Buffer.from('GIF89a not really'), 'a.gif']], { prompt: 'x' }, 415, 'body.image'],
    [
      '/v1/images/edits',
      [
        [
          'image',
          Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('broken')]),
          'a.png',
        ],
      ],
      { prompt: 'x' },
      400,
      'body.image',
    ],
    [
      '/v1/images/edits',
      [
        ['image', image, 'a.png'],
        ['mask', image, 'm.png'],
      ],
      { prompt: 'x' },
      400,
      'body.mask',
    ],
    [
      '/v1/images/edits',
      [
        ['image', image, 'a.png'],
        ['mask', await png(32, 32, true), 'm.png'],
      ],
      { prompt: 'x' },
      400,
      'body.mask',
    ],
    ['/v1/images/edits', [['image', image, 'a.png']], { prompt: 'x', n: 'many' }, 400, 'body.n'],
    // The lane's own limit (media.images.max_n, 1 by default).
    ['/v1/images/edits', [['image', image, 'a.png']], { prompt: 'x', n: '2' }, 400, 'body.n'],
    ['/v1/images/edits', [['image', image, 'a.png']], { prompt: 'x', size: 'huge' }, 400, 'body.size'],
    ['/v1/images/edits', [['image', image, 'a.png']], { prompt: 'x', stream: 'true' }, 400, 'body.stream'],
    ['/v1/images/edits', [['photo', image, 'a.png']], { prompt: 'x' }, 400, 'body.photo'],
    ['/v1/images/variations', [['image', await jpeg(32, 32), 'a.jpg']], {}, 400, 'body.image'],
    ['/v1/images/variations', [['image', await png(32, 16), 'a.png']], {}, 400, 'body.image'],
    ['/v1/images/variations', [['image', image, 'a.png']], { size: '1024x1536' }, 400, 'body.size'],
  ];
  for (const [path, files, fields, status, field] of cases) {
    const r = await post(path, files, fields);
    expect([path, JSON.stringify(fields), r.status, paths(r.body)]).toEqual([
      path,
      JSON.stringify(fields),
      status,
      [field],
    ]);
  }
  const json = await h.req('POST', '/v1/images/edits', { key, body: { prompt: 'x' } });
  expect(json.status).toBe(415);
  expect(fake.requests.length).toBe(before);

  fake.script({ status: 500 });
  expect((await post('/v1/images/edits', [['image', image, 'a.png']], { prompt: 'x' })).status).toBe(502);
  const modelsOnly = (await h.key(['runtime:models'])).apiKey;
  expect((await post('/v1/images/edits', [['image', image, 'a.png']], { prompt: 'x' }, modelsOnly)).status).toBe(403);
});
