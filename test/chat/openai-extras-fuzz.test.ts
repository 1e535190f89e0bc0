import fc from 'fast-check';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// Random, mostly malformed requests to the OpenAI routes added beside chat (legacy completions, moderations,
// compaction, stored chat completions): never a 5xx, every refusal a 400-range answer naming a field, and no
// provider call for a request the route refuses. Fixed seeds, bounded runs.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'ok' } }, (up) => ({ fake, h, key } = up));

/** A value that fits no field, or the edge of one. */
const odd = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 300 }),
  fc.constantFrom(0.5, -1, 2 ** 53, 1e300),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('', 'a\u0000b', '\ud800', 'x'.repeat(600), 'mid', 'svc-oracle', 'chatcmpl-abc'),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 3 }),
);
/** Mostly a valid value, now and then an odd one. */
const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: odd });
const words = fc.string({ minLength: 1, maxLength: 8 }).filter((w) => !w.includes('status:'));
const providerCalls = () => fake.requests.filter((r) => r.method === 'POST').length;
const post = (path: string, body: unknown) => h.req('POST', path, { key, body });

/** The statuses seen, by route (each route must also have answered some requests: the bodies are not all refused). */
const seen = new Map<string, Set<number>>();

/** Checks one answer: below 500, and a refusal names a field (or is a 404/403 with a code). */
function checked(route: string, r: { status: number; body: any }, before: number) {
  if (!seen.has(route)) seen.set(route, new Set());
  seen.get(route)!.add(r.status);
  expect(r.status).toBeLessThan(500);
  if (r.status >= 400) {
    expect(typeof r.body.code).toBe('string');
    if (r.status === 400) expect(r.body.details?.length ?? 0).toBeGreaterThan(0);
    expect(providerCalls()).toBe(before);
  }
}

test('POST /v1/completions: 150 random bodies', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        {
          model: mostly(fc.constantFrom('mid', 'micro')),
          prompt: mostly(fc.oneof(words, fc.array(words, { minLength: 1, maxLength: 3 }))),
          n: mostly(fc.integer({ min: 1, max: 2 })),
          echo: mostly(fc.boolean()),
          logprobs: mostly(fc.constant(null)),
          best_of: mostly(fc.constantFrom(1, null)),
          suffix: mostly(fc.constantFrom('', null)),
          max_tokens: mostly(fc.integer({ min: 1, max: 50 })),
          stop: mostly(fc.constantFrom('\n', ['.'])),
          stream: fc.constantFrom(false, undefined, 'yes'),
        },
        { requiredKeys: [] },
      ),
      async (body) => {
        const before = providerCalls();
        checked('/v1/completions', await post('/v1/completions', body), before);
      },
    ),
    { numRuns: 150, seed: 2611 },
  );
  expect(seen.get('/v1/completions')).toContain(200);
});

test('POST /v1/moderations: 100 random bodies', async () => {
  const part = fc.oneof(
    fc.record({ type: fc.constant('text'), text: words }),
    fc.record(
      {
        type: fc.oneof(odd, fc.constantFrom('text', 'image_url')),
        text: odd,
        image_url: fc.oneof(odd, fc.record({ url: odd })),
      },
      { requiredKeys: [] },
    ),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        {
          input: mostly(
            fc.oneof(
              words,
              fc.array(words, { minLength: 1, maxLength: 3 }),
              fc.array(part, { minLength: 1, maxLength: 3 }),
            ),
          ),
          model: mostly(fc.constant('svc-moderation')),
        },
        { requiredKeys: [] },
      ),
      async (body) => {
        const before = providerCalls();
        checked('/v1/moderations', await post('/v1/moderations', body), before);
      },
    ),
    { numRuns: 100, seed: 2612 },
  );
  expect(seen.get('/v1/moderations')).toContain(200);
});

test('POST /v1/responses/compact: 100 random bodies', async () => {
  const item = fc.record(
    {
      type: fc.oneof(odd, fc.constantFrom('message', 'compaction', 'function_call')),
      role: fc.oneof(odd, fc.constantFrom('user', 'assistant')),
      content: odd,
      encrypted_content: fc.oneof(odd, fc.constantFrom('svccmp1.AAAA', 'svccmp1.' + 'A'.repeat(60))),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        {
          model: fc.oneof(odd, fc.constant('mid')),
          input: fc.oneof(odd, fc.array(item, { maxLength: 3 })),
          previous_response_id: fc.oneof(odd, fc.constant('resp_abc')),
          instructions: odd,
        },
        { requiredKeys: [] },
      ),
      async (body) => {
        const before = providerCalls();
        checked('/v1/responses/compact', await post('/v1/responses/compact', body), before);
      },
    ),
    { numRuns: 100, seed: 2613 },
  );
  expect(seen.get('/v1/responses/compact')).toContain(200);
});

test('stored chat completions: 100 random list queries and metadata updates', async () => {
  const made = await post('/v1/chat/completions', {
    model: 'mid',
    messages: [{ role: 'user', content: 'x' }],
    store: true,
  });
  expect(made.status).toBe(200);
  const queryPart = fc.oneof(
    fc.tuple(
      fc.constantFrom('limit', 'order', 'after', 'model', 'metadata[k]', 'metadata[]', 'metadata[a]'),
      fc.string({ maxLength: 5 }),
    ),
    fc.tuple(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(queryPart, { maxLength: 4 }), odd, async (pairs, metadata) => {
      const q = new URLSearchParams(pairs).toString();
      const list = await h.req('GET', `/v1/chat/completions?${q}`, { key });
      checked('list', list, providerCalls());
      if (list.status === 200) expect(list.body.object).toBe('list');
      const update = await post(`/v1/chat/completions/${made.body.id}`, { metadata });
      expect([200, 400]).toContain(update.status);
      checked('update', update, providerCalls());
      const messages = await h.req('GET', `/v1/chat/completions/${made.body.id}/messages?${q}`, { key });
      expect(messages.status).toBeLessThan(500);
    }),
    { numRuns: 100, seed: 2614 },
  );
  expect([...seen.get('list')!].sort()).toEqual([200, 400]);
  expect([...seen.get('update')!].sort()).toEqual([200, 400]);
});
