import fc from 'fast-check';
import { ChatCompletionRequest, MAX_MESSAGE_CHARS, UtilityChatRequest } from '../../schema/chat';
import { readChatCompletionRequest, readChatHeaders, readUtilityChatRequest } from '../../schema/chat-read';
import { ChatHeaders } from '../../schema/headers';

// The checked readers of the chat bodies must never accept what the zod schema refuses, and must
// give exactly the schema's value (same keys in the same order, explicit undefined kept) for what
// they accept; anything they leave (undefined) goes through the schema.

const LONG = 'x'.repeat(MAX_MESSAGE_CHARS);

/** A value that fits no field, or an edge of one; undefined stands for a key present without a value. */
const anyLeaf = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 3 }),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -0, 1.5, 2.5, 65_536, 65_537, 2 ** 53, -1e300, Number.NaN, Number.POSITIVE_INFINITY),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
);

/**
 * An object with these fields (each may be absent, or now and then hold any leaf), or now and then
 * not an object at all; mostly near-valid, so that both sides of every check are reached.
 */
function shaped(
  fields: Record<string, fc.Arbitrary<unknown>>,
  junkWeight = 2,
  requiredKeys: string[] = [],
): fc.Arbitrary<unknown> {
  const model: Record<string, fc.Arbitrary<unknown>> = { extra: anyLeaf };
  for (const [k, a] of Object.entries(fields))
    model[k] = fc.oneof({ weight: 30, arbitrary: a }, { weight: 1, arbitrary: anyLeaf });
  const record = fc.record(model, { requiredKeys });
  return fc.oneof(
    { weight: 60, arbitrary: record },
    { weight: junkWeight, arbitrary: anyLeaf },
    { weight: junkWeight, arbitrary: fc.array(record, { maxLength: 1 }) },
  );
}

const text = (max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 4 }) },
    fc.constantFrom('x'.repeat(max), 'x'.repeat(max + 1), '', '😀'.repeat(max / 2), `${'😀'.repeat(max / 2)}x`),
  );

const message = shaped(
  {
    role: fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom('system', 'developer', 'user', 'assistant') },
      { weight: 1, arbitrary: fc.constantFrom('tool', 'User', '') },
    ),
    content: fc.oneof(
      { weight: 16, arbitrary: fc.string({ maxLength: 5 }) },
      { weight: 1, arbitrary: fc.constantFrom(LONG, `${LONG}x`) },
      {
        weight: 2,
        arbitrary: fc.array(shaped({ type: fc.constantFrom('text', 'image_url'), text: fc.string({ maxLength: 3 }) }), {
          maxLength: 2,
        }),
      },
    ),
    name: text(64),
  },
  1,
);

const num = (min: number, max: number) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.double({ min, max, noNaN: true }) },
    { weight: 4, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.double({ min: min - 1, max: max + 1, noNaN: true }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 1, 1.5) },
  );

const int = (min: number, max: number) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.constantFrom(min - 1, max + 1, 1.5, 2 ** 53, -0) },
  );

const fields = {
  model: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('svc-oracle', 'gpt-4o', 'x'.repeat(100)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(101), `${'😀'.repeat(50)}x`) },
  ),
  messages: fc.oneof(
    { weight: 20, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constant([]) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(500, 501)
        .map((n) => Array.from({ length: n }, () => ({ role: 'user', content: 'hi' }))),
    },
  ),
  temperature: num(0, 2),
  top_p: num(0, 1),
  max_tokens: int(1, 65_536),
  max_completion_tokens: int(1, 65_536),
  stop: fc.oneof(
    text(200),
    fc.array(fc.oneof({ weight: 8, arbitrary: text(200) }, { weight: 1, arbitrary: anyLeaf }), { maxLength: 5 }),
  ),
  presence_penalty: num(-2, 2),
  frequency_penalty: num(-2, 2),
  seed: fc.oneof(fc.integer(), fc.constantFrom(2 ** 53 - 1, 2 ** 53, -(2 ** 53) + 1, 1.25)),
  n: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(2, '1') }),
  user: text(256),
  stream: fc.boolean(),
  store: fc.boolean(),
  stream_options: shaped({ include_usage: fc.boolean() }),
  // Rare, as in real traffic: a body with one is always left to the schema.
  response_format: fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { type: 'json_object' },
        { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
        { type: 'json_schema', json_schema: { name: 'bad name' } },
      ),
    },
  ),
};
const personaFields = {
  profile: fc.oneof(text(64), fc.constantFrom('architect', 'coach')),
  svc_skills: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: shaped({ enabled: fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }) }) },
  ),
};

/** Every key path of a value, in order, with the type at it (so key order and explicit undefined count). */
function shape(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return [`${at}:array`, ...v.flatMap((x, i) => shape(x, `${at}[${i}]`))];
  if (typeof v === 'object' && v !== null)
    return [`${at}:object`, ...Object.keys(v).flatMap((k) => shape((v as Record<string, unknown>)[k], `${at}.${k}`))];
  return [`${at}:${v === undefined ? 'undefined' : JSON.stringify(v)}`];
}

const readers = [
  { name: 'readChatCompletionRequest', read: readChatCompletionRequest, schema: ChatCompletionRequest, persona: true },
  { name: 'readUtilityChatRequest', read: readUtilityChatRequest, schema: UtilityChatRequest, persona: false },
] as const;

describe.each(readers)('$name', ({ read, schema, persona }) => {
  /** Checks one body; returns whether the reader took it (and whether the schema accepts it). */
  const agrees = (v: unknown) => {
    const mine = read(v);
    const ref = schema.safeParse(v);
    if (mine !== undefined) {
      expect(ref.success).toBe(true);
      expect(mine).toStrictEqual(ref.data);
      expect(shape(mine)).toEqual(shape(ref.data));
    }
    return { took: mine !== undefined, valid: ref.success };
  };
  const body = shaped(persona ? { ...fields, ...personaFields } : fields, 1, ['messages']);

  it('reads the bodies clients send, with the schema’s value', () => {
    const bodies = [
      { model: 'svc-oracle', messages: [{ role: 'user', content: 'Say the pangram.' }], stream: true },
      {
        model: 'svc-oracle',
        messages: [
          { role: 'system', content: 'Be brief.', name: 'ops' },
          { role: 'developer', content: 'Answer in English.' },
          { role: 'user', content: 'Hello', unknown: 1 },
          { role: 'assistant', content: 'Hi' },
        ],
        temperature: 1,
        max_tokens: 100,
        stop: ['\n\n'],
        stream: true,
        stream_options: { include_usage: true, other: 1 },
        tools: [],
      },
      { messages: [{ role: 'user', content: 'x' }], stream_options: null, seed: 7, n: 1, user: 'u1', store: true },
      // Nulls where OpenAI's contract allows them (clients that serialise None).
      {
        messages: [{ role: 'user', content: 'x' }],
        ...Object.fromEntries(
          ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'presence_penalty']
            .concat(['frequency_penalty', 'seed', 'n', 'stream', 'store', 'stream_options'])
            .map((k) => [k, null]),
        ),
      },
      ...(persona ? [{ messages: [{ role: 'user', content: 'x' }], profile: 'x'.repeat(65) }] : []),
      ...(persona ? [{ messages: [{ role: 'user', content: 'x' }], profile: 5, svc_skills: undefined }] : []),
    ];
    for (const b of bodies) expect(agrees(b)).toEqual({ took: true, valid: true });
  });

  it('leaves to the schema what it does not handle, valid or not', () => {
    const left = [
      null,
      [],
      'x',
      {},
      { messages: [] },
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }] },
      { messages: [{ role: 'tool', content: 'x' }] },
      { messages: [{ role: 'user', content: `${LONG}x` }] },
      { messages: [{ role: 'user', content: 'x' }], model: '' },
      { messages: [{ role: 'user', content: 'x' }], temperature: 2.5 },
      { messages: [{ role: 'user', content: 'x' }], max_tokens: 1.5 },
      { messages: [{ role: 'user', content: 'x' }], seed: 2 ** 53 },
      { messages: [{ role: 'user', content: 'x' }], n: 2 },
      { messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b', 'c', 'd', 'e'] },
      { messages: [{ role: 'user', content: 'x' }], stream: 'true' },
      { messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: 1 } },
      { messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } },
      { messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }] },
      { messages: [{ role: 'user', content: 'x' }], functions: [{ name: 'f' }], tools: [] },
      { messages: [{ role: 'user', content: 'x' }], store: true, metadata: { run: 'a' } },
      { messages: [{ role: 'user', content: 'x' }], store: 'yes' },
      { messages: [{ role: 'user', content: 'x' }], modalities: ['text'], service_tier: 'auto' },
      { messages: [{ role: 'user', content: 'x' }], audio: { voice: 'alloy' } },
      { messages: [{ role: 'user', content: 'x' }], web_search_options: {} },
      ...(persona ? [{ messages: [{ role: 'user', content: 'x' }], svc_skills: { enabled: ['a'] } }] : []),
    ];
    for (const b of left) {
      expect(read(b)).toBeUndefined();
      agrees(b);
    }
  });

  it('agrees with the zod schema on generated bodies, and reads most valid ones', () => {
    let valid = 0;
    let took = 0;
    fc.assert(
      fc.property(body, (b) => {
        const r = agrees(b);
        if (r.valid) valid++;
        if (r.took) took++;
      }),
      { numRuns: 20_000 },
    );
    // Not a vacuous reader: it takes a good share of what the schema accepts.
    expect(valid).toBeGreaterThan(1000);
    expect(took / valid).toBeGreaterThan(0.3);
  });

  it('agrees with the zod schema on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => void agrees(v)),
      { numRuns: 3_000 },
    );
  });
});

describe('readChatHeaders', () => {
  const headerValue = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('', '  ', 'Europe/Paris', 'Not/AZone', 'a,b', 'sess-1', 'bad id!', 'x'.repeat(2001)),
    fc.string({ maxLength: 4 }),
    fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }),
  );
  const headers = fc.record(
    {
      host: fc.constant('127.0.0.1'),
      'content-type': fc.constant('application/json'),
      authorization: fc.string({ maxLength: 4 }),
      'x-session-id': headerValue,
      'x-svc-skill': headerValue,
      'x-timezone': headerValue,
      'x-svc-context': fc.constantFrom('dev', 'ops'),
    },
    { requiredKeys: [] },
  );

  it('reads a chat without chat headers as the schema does, and leaves any chat header to it', () => {
    let took = 0;
    fc.assert(
      fc.property(headers, (h) => {
        const mine = readChatHeaders(h);
        if (mine === undefined) {
          expect(['x-session-id', 'x-svc-skill', 'x-timezone'].some((k) => k in h)).toBe(true);
          return;
        }
        took++;
        const ref = ChatHeaders.safeParse(h);
        expect(ref.success).toBe(true);
        expect(mine).toStrictEqual(ref.data);
        expect(shape(mine)).toEqual(shape(ref.data));
      }),
      { numRuns: 5_000 },
    );
    expect(took).toBeGreaterThan(10);
    expect(readChatHeaders({ host: 'x', 'content-type': 'application/json' })).toStrictEqual({ 'x-svc-skill': [] });
  });
});
