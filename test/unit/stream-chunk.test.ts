import fc from 'fast-check';
import { readStreamChunk, StreamChunk } from '../../activities/providers/openai-client';

// The hand-written reader of upstream stream chunks must accept exactly what the zod schema accepts.

/** Any value a field could hold in JSON, plus undefined (an absent key), weighted towards edge cases. */
const anyLeaf = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.integer({ min: -2, max: 17 }),
  fc.constantFrom(0.5, -0, 2 ** 53, 1e300, Number.NaN, Number.POSITIVE_INFINITY),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
);

/** An object with these fields (each may be absent), or sometimes not an object at all. */
function shaped(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = fc.record(Object.fromEntries(Object.entries(fields).map(([k, a]) => [k, fc.oneof(a, anyLeaf)])), {
    requiredKeys: [],
  });
  return fc.oneof(
    { weight: 6, arbitrary: record },
    { weight: 1, arbitrary: anyLeaf },
    { weight: 1, arbitrary: fc.array(record, { maxLength: 1 }) },
  );
}

const toolCall = shaped({
  index: fc.integer({ min: -1, max: 16 }),
  id: fc.string({ maxLength: 3 }),
  function: shaped({ name: fc.string({ maxLength: 3 }), arguments: fc.string({ maxLength: 3 }) }),
});
const choice = shaped({
  delta: shaped({
    content: fc.string({ maxLength: 3 }),
    tool_calls: fc.array(toolCall, { maxLength: 3 }),
    role: fc.string(),
  }),
  finish_reason: fc.string({ maxLength: 3 }),
  index: fc.integer(),
});
const chunk = shaped({
  choices: fc.array(choice, { maxLength: 3 }),
  usage: shaped({
    prompt_tokens: fc.integer({ min: 0, max: 100 }),
    completion_tokens: fc.integer({ min: 0, max: 100 }),
    total_tokens: fc.integer({ min: 0, max: 200 }),
  }),
  error: anyLeaf,
  id: fc.string(),
});

const agrees = (v: unknown) => expect(readStreamChunk(v) !== undefined).toBe(StreamChunk.safeParse(v).success);

describe('readStreamChunk', () => {
  it('accepts the chunks OpenAI-compatible upstreams send', () => {
    const chunks = [
      {
        id: 'c',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      },
      { choices: [{ index: 0, delta: { content: 'The ' }, finish_reason: null }] },
      {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{' } }],
            },
          },
        ],
      },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } },
      { choices: [], usage: { prompt_tokens: 3, completion_tokens: 5 } },
      { error: { message: 'overloaded' } },
    ];
    for (const c of chunks) {
      expect(readStreamChunk(c)).toBe(c);
      agrees(c);
    }
  });

  it('refuses what the schema refuses', () => {
    const bad = [
      null,
      [],
      'data',
      { choices: {} },
      { choices: [null] },
      { choices: [{ delta: { content: 5 } }] },
      { choices: [{ delta: { tool_calls: [{ index: 16 }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 1.5 }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 2 ** 53 }] } }] },
      { choices: [{ finish_reason: 1 }] },
      { usage: { prompt_tokens: 1 } },
      { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: null } },
    ];
    for (const c of bad) {
      expect(readStreamChunk(c)).toBeUndefined();
      agrees(c);
    }
  });

  it('agrees with the zod schema on generated chunks', () => {
    fc.assert(fc.property(chunk, agrees), { numRuns: 20_000 });
  });

  it('agrees with the zod schema on arbitrary JSON', () => {
    fc.assert(fc.property(fc.jsonValue(), agrees), { numRuns: 5_000 });
  });
});
