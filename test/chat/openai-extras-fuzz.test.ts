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

/** A random attribute filter: comparisons and compounds, mostly well formed. */
const filter: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('comparison'),
    fc.record({
      type: fc.oneof(odd, fc.constantFrom('and', 'or')),
      filters: fc.oneof(odd, fc.array(tie('node'), { maxLength: 3 })),
    }),
  ),
  comparison: fc.record(
    {
      type: mostly(fc.constantFrom('eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin')),
      key: mostly(fc.constantFrom('team', 'year')),
      value: fc.oneof(odd, fc.constantFrom('a', 2024, true), fc.constant(['a', 1])),
    },
    { requiredKeys: [] },
  ),
})).node;

test('vector stores: 150 random creates, searches and file adds', async () => {
  const file = await fetch(`${h.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: (() => {
      const form = new FormData();
      form.append('purpose', 'assistants');
      form.append('file', new Blob(['Budget notes.']), 'notes.txt');
      return form;
    })(),
  }).then((r) => r.json() as Promise<{ id: string }>);
  const store = await post('/v1/vector_stores', { name: 'fuzz' });
  expect(store.status).toBe(200);
  const chunking = fc.oneof(
    odd,
    fc.constant({ type: 'auto' }),
    fc.record({
      type: fc.constant('static'),
      static: fc.record({
        max_chunk_size_tokens: mostly(fc.integer({ min: 50, max: 5000 })),
        chunk_overlap_tokens: odd,
      }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        {
          name: mostly(words),
          file_ids: fc.oneof(odd, fc.constant([file.id]), fc.constant(['file-nope'])),
          chunking_strategy: chunking,
          expires_after: fc.oneof(odd, fc.record({ anchor: mostly(fc.constant('last_active_at')), days: odd })),
          metadata: odd,
        },
        { requiredKeys: [] },
      ),
      fc.record(
        {
          query: mostly(fc.oneof(words, fc.array(words, { minLength: 1, maxLength: 3 }))),
          filters: filter,
          max_num_results: mostly(fc.integer({ min: 1, max: 50 })),
          ranking_options: fc.oneof(
            odd,
            fc.record({ ranker: mostly(fc.constantFrom('auto', 'none')), score_threshold: odd }, { requiredKeys: [] }),
          ),
          rewrite_query: odd,
        },
        { requiredKeys: [] },
      ),
      fc.record(
        { file_id: fc.oneof(odd, fc.constant(file.id)), attributes: odd, chunking_strategy: chunking },
        { requiredKeys: [] },
      ),
      async (create, search, add) => {
        let before = providerCalls();
        checked('vs create', await post('/v1/vector_stores', create), before);
        before = providerCalls();
        checked('vs search', await post(`/v1/vector_stores/${store.body.id}/search`, search), before);
        before = providerCalls();
        checked('vs file', await post(`/v1/vector_stores/${store.body.id}/files`, add), before);
        before = providerCalls();
        checked('vs batch', await post(`/v1/vector_stores/${store.body.id}/file_batches`, { files: [add] }), before);
      },
    ),
    { numRuns: 150, seed: 2615 },
  );
  for (const route of ['vs create', 'vs search', 'vs file', 'vs batch']) expect(seen.get(route)).toContain(200);
});

test('POST /v1/audio/speech: 100 random bodies', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        {
          model: mostly(fc.constant('svc-speech')),
          input: mostly(words),
          voice: mostly(fc.oneof(fc.constant('alloy'), fc.record({ id: words }))),
          response_format: mostly(fc.constantFrom('mp3', 'wav', 'pcm')),
          speed: mostly(fc.constantFrom(0.25, 1, 4)),
          stream_format: mostly(fc.constantFrom('audio', 'sse')),
          instructions: odd,
        },
        { requiredKeys: [] },
      ),
      async (body) => {
        const before = providerCalls();
        const r = await post('/v1/audio/speech', body);
        checked('speech', { status: r.status, body: r.status >= 400 ? r.body : {} }, before);
      },
    ),
    { numRuns: 100, seed: 2616 },
  );
  expect(seen.get('speech')).toContain(200);
});
