import OpenAI from 'openai';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// OpenAI's legacy text completions (POST /v1/completions) over the lanes, against a fake OpenAI-compatible upstream.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'upon a time' } }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
const complete = (body: Record<string, unknown>) => h.req('POST', '/v1/completions', { key, body });

describe('/v1/completions', () => {
  test('a prompt answered by its lane as the user’s message (no persona), in OpenAI’s contract, 16 tokens by default', async () => {
    const res = await client.completions.create({ model: 'mid', prompt: 'Once' });
    expect(contractErrors('CreateCompletionResponse', res)).toEqual([]);
    expect(res).toMatchObject({
      object: 'text_completion',
      model: 'mid',
      choices: [{ text: 'upon a time', index: 0, logprobs: null, finish_reason: 'stop' }],
    });
    expect(res.id).toMatch(/^cmpl-/);
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    const sent = fake.chats.at(-1)!.body;
    expect(sent.messages).toEqual([{ role: 'user', content: 'Once' }]);
    expect(sent.max_tokens).toBe(16);

    fake.script({ reply: 'cut', finishReason: 'length' });
    const long = await client.completions.create({
      model: 'micro',
      prompt: 'Go on',
      max_tokens: 3,
      temperature: 0.2,
      stop: ['\n'],
    });
    expect(long.choices[0].finish_reason).toBe('length');
    expect(fake.chats.at(-1)!.body).toMatchObject({ max_tokens: 3, temperature: 0.2, stop: ['\n'] });
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key });
    expect(usage.body.data.find((d: { group: string }) => d.group === 'micro')).toMatchObject({ requests: 1 });
  });

  test('several prompts × n: a lane call each, choices indexed prompt by prompt; seeds step per choice', async () => {
    fake.setDefault({ echo: true });
    const res = await client.completions.create({ model: 'mid', prompt: ['alpha', 'beta'], n: 2, seed: 7 });
    expect(contractErrors('CreateCompletionResponse', res)).toEqual([]);
    expect(res.choices.map((c) => [c.index, c.text])).toEqual([
      [0, 'user: alpha'],
      [1, 'user: alpha'],
      [2, 'user: beta'],
      [3, 'user: beta'],
    ]);
    expect(fake.chats.map((c) => c.body.seed).sort()).toEqual([7, 7, 8, 8]);
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  test('echo puts the prompt first; logprobs come in the legacy form with text offsets', async () => {
    const echoed = await client.completions.create({ model: 'mid', prompt: 'Once ', echo: true });
    expect(echoed.choices[0].text).toBe('Once upon a time');

    fake.script({ reply: 'Yes indeed' });
    const lp = await client.completions.create({ model: 'mid', prompt: 'Sure?', logprobs: 2 });
    expect(contractErrors('CreateCompletionResponse', lp)).toEqual([]);
    expect(lp.choices[0].logprobs).toEqual({
      tokens: ['Yes', ' indeed'],
      token_logprobs: [-0.25, -0.25],
      top_logprobs: [{}, {}],
      text_offset: [0, 3],
    });
    expect(fake.chats.at(-1)!.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
  });

  test('stream: text_completion chunks as the lane writes, each choice ending with its finish reason; usage; echo', async () => {
    fake.script({ reply: 'a b c', usage: { prompt_tokens: 4, completion_tokens: 3 } });
    const stream = await client.completions.create({
      model: 'mid',
      prompt: 'Letters:',
      stream: true,
      echo: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Completion[] = [];
    for await (const c of stream) chunks.push(c);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'text_completion' && c.model === 'mid')).toBe(true);
    expect(
      chunks
        .flatMap((c) => c.choices)
        .map((c) => c.text)
        .join(''),
    ).toBe('Letters:a b c');
    const finishes = chunks.flatMap((c) => c.choices).filter((c) => c.finish_reason);
    expect(finishes.map((c) => [c.index, c.finish_reason])).toEqual([[0, 'stop']]);
    expect(contractErrors('CreateCompletionResponse', { ...chunks.at(-2)!, usage: undefined })).toEqual([]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 3 } });

    fake.script({ reply: 'one two', chunkDelayMs: 2 }, { reply: 'three', chunkDelayMs: 3 });
    const two = await client.completions.create({ model: 'mid', prompt: 'Count', n: 2, stream: true });
    const text = ['', ''];
    const ended: number[] = [];
    for await (const c of two)
      for (const ch of c.choices) {
        text[ch.index] += ch.text;
        if (ch.finish_reason) ended.push(ch.index);
      }
    expect(new Set(text)).toEqual(new Set(['one two', 'three']));
    expect(ended.sort()).toEqual([0, 1]);
  });

  test('upstream failures: before the first chunk a proper status; mid-stream an error chunk, then [DONE]', async () => {
    fake.script({ status: 500 });
    expect((await complete({ model: 'mid', prompt: 'x' })).status).toBe(502);
    fake.script({ status: 500 });
    expect((await complete({ model: 'mid', prompt: 'x', stream: true })).status).toBe(502);
    fake.script({ reply: 'one two three four', dropAfterChunks: 1 });
    const broken = await complete({ model: 'mid', prompt: 'x', stream: true });
    expect(broken.status).toBe(200);
    const events = broken.text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2)!).error).toMatchObject({ code: expect.stringMatching(/^upstream_/) });
  });

  test('bad input is a 400 naming the field and what to do; an unknown lane 404; no scope 403', async () => {
    const bad: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ prompt: 'x' }, 'body.model', /./],
      [{ model: 'mid' }, 'body.prompt', /required/],
      [{ model: 'mid', prompt: [1, 2, 3] }, 'body.prompt', /token-id prompts/],
      [{ model: 'mid', prompt: [[1, 2]] }, 'body.prompt', /token-id prompts/],
      [{ model: 'mid', prompt: [] }, 'body.prompt', /1 to 8 prompts/],
      [{ model: 'mid', prompt: ['a', 5] }, 'body.prompt.1', /token-id prompts/],
      [{ model: 'mid', prompt: { text: 'a' } }, 'body.prompt', /a text/],
      [{ model: 'mid', prompt: 'x', suffix: 'end' }, 'body.suffix', /fill-in-the-middle/],
      [{ model: 'mid', prompt: 'x', best_of: 3 }, 'body.best_of', /best_of equal to n/],
      [{ model: 'mid', prompt: 'x', echo: true, logprobs: 1 }, 'body.logprobs', /leave out echo or logprobs/],
      [{ model: 'mid', prompt: ['a', 'b', 'c'], n: 3 }, 'body.n', /at most 8 choices/],
      [{ model: 'mid', prompt: 'x', logprobs: 6 }, 'body.logprobs', /./],
      [{ model: 'mid', prompt: 'x', max_tokens: 0 }, 'body.max_tokens', /./],
      [{ model: 'mid', prompt: 'x', temperature: 3 }, 'body.temperature', /./],
    ];
    const before = fake.chats.length;
    for (const [body, path, message] of bad) {
      const r = await complete(body);
      expect([JSON.stringify(body), r.status, paths(r.body)]).toEqual([JSON.stringify(body), 400, [path]]);
      expect(r.body.details[0].message).toMatch(message);
    }
    expect(fake.chats.length).toBe(before);
    // Accepted as OpenAI sends them: null fields, an empty suffix, best_of equal to n.
    const ok = await complete({ model: 'mid', prompt: 'x', suffix: '', best_of: 2, n: 2, echo: null, logprobs: null });
    expect([ok.status, ok.body.choices?.length]).toEqual([200, 2]);

    const unknown = await complete({ model: 'gpt-3.5-turbo-instruct', prompt: 'x' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'model_not_found']);
    const modelsOnly = (await h.key(['runtime:models'])).apiKey;
    const denied = await h.req('POST', '/v1/completions', { key: modelsOnly, body: { model: 'mid', prompt: 'x' } });
    expect(denied.status).toBe(403);
  });
});
