import OpenAI from 'openai';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// OpenAI's moderations endpoint over the configured provider's (a fake OpenAI-compatible upstream that flags texts
// with "kill" and fails as the input asks).

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], env: { SVC_MODERATION_MODEL: 'omni-moderation-latest' } }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
const moderate = (body: unknown, k = key) => h.req('POST', '/v1/moderations', { key: k, body });

describe('/v1/moderations', () => {
  test('texts classified by the provider’s model, a result each in order, in OpenAI’s contract', async () => {
    const res = await client.moderations.create({ input: ['hello there', 'I will kill them'] });
    expect(contractErrors('CreateModerationResponse', res)).toEqual([]);
    expect(res.model).toBe('svc-moderation');
    expect(res.id).toMatch(/^modr-/);
    expect(res.results.map((r) => [r.flagged, r.categories.violence])).toEqual([
      [false, false],
      [true, true],
    ]);
    expect(res.results[1].category_scores.violence).toBe(0.91);
    expect(fake.moderationRequests.at(-1)!.body).toEqual({
      model: 'omni-moderation-latest',
      input: ['hello there', 'I will kill them'],
    });
    const one = await client.moderations.create({ input: 'just text', model: 'omni-moderation-latest' });
    expect([one.model, one.results.length]).toEqual(['omni-moderation-latest', 1]);
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key });
    expect(usage.body.data.find((d: { group: string }) => d.group === 'svc-moderation')).toMatchObject({
      requests: 2,
    });
  });

  test('text and image parts: one result; images loaded and checked here, sent as data URLs', async () => {
    const res = await client.moderations.create({
      input: [
        { type: 'text', text: 'what is this' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${FAKE_PNG_B64}` } },
      ],
    });
    expect(res.results).toHaveLength(1);
    expect(res.results[0].category_applied_input_types?.violence).toEqual(['text', 'image']);
    const sent = fake.moderationRequests.at(-1)!.body.input;
    expect(sent[0]).toEqual({ type: 'text', text: 'what is this' });
    expect(sent[1].image_url.url).toMatch(/^data:image\/png;base64,/);

    const before = fake.moderationRequests.length;
    const bad = await moderate({
      input: [
        { type: 'text', text: 'x' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,bm90IGFuIGltYWdl' } },
      ],
    });
    expect([bad.status, paths(bad.body)]).toEqual([415, ['body.input.1.image_url.url']]);
    const local = await moderate({ input: [{ type: 'image_url', image_url: { url: 'http://127.0.0.1:1/x.png' } }] });
    expect(local.status).toBe(400);
    expect(fake.moderationRequests.length).toBe(before);
  });

  test('provider failures: 429 with its Retry-After, no moderation endpoint 502 saying so, malformed 502', async () => {
    const limited = await moderate({ input: 'status:429' });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    const missing = await moderate({ input: 'status:404' });
    expect(missing.status).toBe(502);
    expect(missing.body.error).toMatch(/no moderation endpoint/);
    expect((await moderate({ input: 'status:500' })).status).toBe(502);
    expect((await moderate({ input: 'malformed' })).status).toBe(502);
    expect((await moderate({ input: ['a', 'malformed'] })).status).toBe(502);
  });

  test('bad input is a 400 naming the field; an unknown model 404; no scope 403', async () => {
    const before = fake.moderationRequests.length;
    const bad: Array<[unknown, string]> = [
      [{}, 'body.input'],
      [{ input: 5 }, 'body.input'],
      [{ input: [] }, 'body.input'],
      [{ input: [{ type: 'audio', audio: 'x' }] }, 'body.input'],
      [{ input: Array.from({ length: 257 }, () => 'x') }, 'body.input'],
      [{ input: 'x', model: '' }, 'body.model'],
    ];
    for (const [body, path] of bad) {
      const r = await moderate(body);
      expect([JSON.stringify(body).slice(0, 50), r.status, paths(r.body)]).toEqual([
        JSON.stringify(body).slice(0, 50),
        400,
        [path],
      ]);
    }
    const unknown = await moderate({ input: 'x', model: 'text-moderation-stable' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'model_not_found']);
    const modelsOnly = (await h.key(['runtime:models'])).apiKey;
    expect((await moderate({ input: 'x' }, modelsOnly)).status).toBe(403);
    expect(fake.moderationRequests.length).toBe(before);
  });
});
