import fc from 'fast-check';
import OpenAI from 'openai';
import sharp from 'sharp';
import { PERSONA } from '../../reasoning/persona';
import { responseChain } from '../../activities/store/responses';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors, postResponseStream, readResponseEvents, streamEventErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { fields, type Harness } from '../helpers/harness';
import { startExtraApp } from '../helpers/extra-app';

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {} }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const post = (body: unknown, k = key, headers: Record<string, string> = {}) =>
  h.req('POST', '/v1/responses', { key: k, body, headers });
/** The messages the upstream got, after the persona's system message. */
const sentMessages = (i = -1) => fake.chats.at(i)!.body.messages.slice(1);

const streamRaw = (body: Record<string, unknown>) => postResponseStream(h.url, key, body);

describe('POST /v1/responses with the official openai client', () => {
  test('text input: a Response in OpenAI’s contract, persona then instructions upstream, usage and meta', async () => {
    fake.script({ reply: 'Forty-two.', usage: { prompt_tokens: 30, completion_tokens: 3 } });
    const res = await client.responses.create({
      model: 'svc-oracle',
      instructions: 'Answer in one word.',
      input: 'Meaning of life?',
      metadata: { ticket: 'T-1' },
    });
    expect(contractErrors('Response', res)).toEqual([]);
    expect(res.id).toMatch(/^resp_/);
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.model).toBe('svc-oracle');
    expect(res.output_text).toBe('Forty-two.');
    expect(res.output).toHaveLength(1);
    expect(res.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(res.usage).toMatchObject({ input_tokens: 30, output_tokens: 3, total_tokens: 33 });
    expect(res.metadata).toEqual({ ticket: 'T-1' });
    expect(res.instructions).toBe('Answer in one word.');
    expect((res as unknown as { meta: { provider: string } }).meta.provider).toBe('default');
    const upstream = fake.chats.at(-1)!.body;
    expect(upstream.messages[0].content.startsWith(PERSONA)).toBe(true);
    // Instructions are client guidance inside the one system message, after the persona.
    expect(upstream.messages[0].content).toContain(
      'Client guidance (it cannot change your identity):\nAnswer in one word.',
    );
    expect(upstream.messages.slice(1)).toEqual([{ role: 'user', content: 'Meaning of life?' }]);
    expect(upstream.model).toBe('gpt-4o');
    expect(JSON.stringify(res)).not.toContain('gpt-4o');
  });

  test('stream: every event in the contract, sequence numbers in order, text deltas, completed equals the stored one', async () => {
    fake.script({ reply: 'alpha beta gamma', chunkDelayMs: 2 });
    const stream = await client.responses.create({ model: 'mid', input: 'Count in Greek', stream: true });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    for (const e of events) expect(streamEventErrors(e)).toEqual([]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
    expect(events.slice(0, 4).map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.map((e) => e.delta).join('')).toBe('alpha beta gamma');
    expect(deltas.length).toBe(3);
    expect(events.slice(-4).map((e) => e.type)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.at(-1).response;
    expect(done.status).toBe('completed');
    expect(done.output[0].content[0].text).toBe('alpha beta gamma');
    const stored = await h.req('GET', `/v1/responses/${done.id}`, { key });
    expect(stored.body).toEqual(done);
    expect((await client.responses.retrieve(done.id)).output_text).toBe('alpha beta gamma');
  });

  test('the SDK’s stream helper gives the final response and its text', async () => {
    fake.script({ reply: 'one two', chunkDelayMs: 1 });
    const runner = client.responses.stream({ model: 'svc-oracle', input: 'Say two words' });
    let text = '';
    runner.on('response.output_text.delta', (e) => (text += e.delta));
    const final = await runner.finalResponse();
    expect(text).toBe('one two');
    expect(final.output_text).toBe('one two');
  });
});

describe('function tools', () => {
  const tools = [
    {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      strict: true,
    },
  ];

  test('a call comes back as a function_call item; its output continues the response by previous_response_id', async () => {
    fake.script({ toolCalls: [{ id: 'call_abc', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const first = await client.responses.create({ model: 'svc-oracle', input: 'Weather in Oslo?', tools });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_abc',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
        status: 'completed',
      }),
    ]);
    expect(first.tools).toEqual([{ ...tools[0] }]);
    const up1 = fake.chats.at(-1)!.body;
    expect(up1.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: tools[0].parameters,
          strict: true,
        },
      },
    ]);

    fake.script({ reply: 'Sunny, 20°C.' });
    const second = await client.responses.create({
      model: 'svc-oracle',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_abc', output: '{"temp":20,"sky":"sunny"}' }],
      tools,
    });
    expect(second.output_text).toBe('Sunny, 20°C.');
    expect(second.previous_response_id).toBe(first.id);
    expect(sentMessages()).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: '{"temp":20,"sky":"sunny"}' },
    ]);
  });

  test('a client that keeps its own history (store: false) sends calls and outputs back as items; reasoning items are dropped', async () => {
    fake.script({ reply: 'Done.' });
    const res = await post({
      model: 'svc-oracle',
      store: false,
      tools,
      input: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo and Rome?' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'cold\u0000' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'warm' }] },
      ],
    });
    expect(res.body).toMatchObject({ store: false });
    expect(res.status).toBe(200);
    expect(fake.chats.at(-1)!.body.messages[0].content).toContain('Be brief.');
    expect(sentMessages()).toEqual([
      { role: 'user', content: 'Weather in Oslo and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'cold' },
      { role: 'tool', tool_call_id: 'c2', content: 'warm' },
    ]);
    // Not stored: it cannot be read back or continued.
    expect((await h.req('GET', `/v1/responses/${res.body.id}`, { key })).status).toBe(404);
    const next = await post({ input: 'and?', previous_response_id: res.body.id });
    expect(next.status).toBe(404);
    expect(fields(next)).toEqual(['body.previous_response_id']);
  });

  test('the SDK’s stream helper assembles a streamed call with its arguments', async () => {
    fake.script({ toolCalls: [{ id: 'call_h1', name: 'get_weather', arguments: { city: 'Quito' } }] });
    const runner = client.responses.stream({ model: 'svc-oracle', input: 'Weather in Quito?', tools });
    let args = '';
    runner.on('response.function_call_arguments.delta', (e) => (args += e.delta));
    const final = await runner.finalResponse();
    expect(args).toBe('{"city":"Quito"}');
    expect(final.output).toEqual([
      expect.objectContaining({ type: 'function_call', call_id: 'call_h1', name: 'get_weather', arguments: args }),
    ]);
  });

  test('streamed calls: output_item.added, argument deltas and done events, all in the contract', async () => {
    fake.script({ toolCalls: [{ id: 'call_s1', name: 'get_weather', arguments: { city: 'Lima' } }] });
    const res = await streamRaw({ model: 'svc-oracle', input: 'Weather in Lima?', tools, tool_choice: 'required' });
    expect(res.status).toBe(200);
    const events = await readResponseEvents(res);
    for (const e of events) {
      expect(e.event).toBe(e.data.type);
      expect(streamEventErrors(e.data)).toEqual([]);
    }
    const added = events.find((e) => e.event === 'response.output_item.added')!.data;
    expect(added.item).toMatchObject({ type: 'function_call', call_id: 'call_s1', name: 'get_weather', arguments: '' });
    const args = events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta);
    expect(args.join('')).toBe('{"city":"Lima"}');
    const argsDone = events.find((e) => e.event === 'response.function_call_arguments.done')!.data;
    expect(argsDone).toMatchObject({ name: 'get_weather', arguments: '{"city":"Lima"}', item_id: added.item.id });
    const completed = events.at(-1)!.data.response;
    expect(completed.output).toEqual([
      expect.objectContaining({ type: 'function_call', id: added.item.id, call_id: 'call_s1' }),
    ]);
    expect(events.some((e) => e.event === 'response.output_text.delta')).toBe(false);
    expect(fake.chats.at(-1)!.body.tool_choice).toBe('required');
  });
});

describe('custom (freeform) tools', () => {
  const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch';
  const applyPatch = {
    type: 'custom' as const,
    name: 'apply_patch',
    description: 'Apply a patch to the workspace.',
    format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: "*** Begin Patch" /(.|\\n)*/' },
  };

  test('the lane gets a function of one string; its call comes back as a custom_tool_call; its output continues', async () => {
    fake.script({ toolCalls: [{ id: 'call_p1', name: 'apply_patch', arguments: { input: patch } }] });
    const first = await client.responses.create({
      model: 'svc-oracle',
      input: 'Add hello.txt',
      tools: [applyPatch],
      tool_choice: { type: 'custom', name: 'apply_patch' },
    });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.output).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_p1', name: 'apply_patch', input: patch }),
    ]);
    expect(first.tools).toEqual([applyPatch]);
    const sent = fake.chats.at(-1)!.body;
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    expect(sent.tools[0].function.parameters.required).toEqual(['input']);
    expect(sent.tools[0].function.description).toContain('Lark grammar');
    expect(sent.tools[0].function.description).toContain('Apply a patch');

    fake.script({ reply: 'Done.' });
    const second = await client.responses.create({
      model: 'svc-oracle',
      previous_response_id: first.id,
      input: [{ type: 'custom_tool_call_output', call_id: 'call_p1', output: 'applied' }],
      tools: [applyPatch],
    });
    expect(second.output_text).toBe('Done.');
    expect(sentMessages()).toEqual([
      { role: 'user', content: 'Add hello.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_p1',
            type: 'function',
            function: { name: 'apply_patch', arguments: JSON.stringify({ input: patch }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_p1', content: 'applied' },
    ]);
  });

  test('streamed: the input goes out in custom_tool_call_input events, in the contract; a client-kept call is read', async () => {
    fake.script({ toolCalls: [{ id: 'call_p2', name: 'apply_patch', arguments: { input: patch } }] });
    const events = await readResponseEvents(await streamRaw({ input: 'Add hello.txt', tools: [applyPatch] }));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const types = events.map((e) => e.event);
    expect(types).toContain('response.custom_tool_call_input.done');
    expect(types).not.toContain('response.function_call_arguments.delta');
    const added = events.find((e) => e.event === 'response.output_item.added')!.data.item;
    expect(added).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '' });
    expect(events.find((e) => e.event === 'response.custom_tool_call_input.done')!.data.input).toBe(patch);
    expect(events.at(-1)!.data.response.output).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', id: added.id, input: patch }),
    ]);
    // A model that writes the input bare (not as JSON) still gives the client its text.
    fake.script({ toolCalls: [{ id: 'call_p3', name: 'apply_patch', arguments: patch }] });
    const bare = await post({ input: 'again', tools: [applyPatch] });
    expect(bare.body.output[0].input).toBe(patch);
    // A client that keeps its own history sends the call back as it got it.
    fake.script({ reply: 'ok' });
    const kept = await post({
      store: false,
      tools: [applyPatch],
      input: [
        { role: 'user', content: 'Add hello.txt' },
        { type: 'custom_tool_call', call_id: 'c9', name: 'apply_patch', input: patch },
        { type: 'custom_tool_call_output', call_id: 'c9', output: [{ type: 'input_text', text: 'applied' }] },
      ],
    });
    expect(kept.status).toBe(200);
    expect(sentMessages().slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c9',
            type: 'function',
            function: { name: 'apply_patch', arguments: JSON.stringify({ input: patch }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'c9', content: 'applied' },
    ]);
  });
});

describe('stored responses: chains, input items, delete, tenants', () => {
  test('three turns by previous_response_id: the upstream gets the whole history; instructions are not carried', async () => {
    fake.script({ reply: 'Hi Ada.' }, { reply: 'Your name is Ada.' }, { reply: 'A-d-a.' });
    const r1 = await post({ input: 'I am Ada.', instructions: 'First instructions.' });
    const r2 = await post({ input: 'What is my name?', previous_response_id: r1.body.id });
    const r3 = await post({ input: 'Spell it.', previous_response_id: r2.body.id, instructions: 'Third.' });
    expect([r1.status, r2.status, r3.status]).toEqual([200, 200, 200]);
    const system = fake.chats.at(-1)!.body.messages[0].content;
    expect(system).toContain('Third.');
    expect(system).not.toContain('First instructions.');
    expect(sentMessages()).toEqual([
      { role: 'user', content: 'I am Ada.' },
      { role: 'assistant', content: 'Hi Ada.' },
      { role: 'user', content: 'What is my name?' },
      { role: 'assistant', content: 'Your name is Ada.' },
      { role: 'user', content: 'Spell it.' },
    ]);
  });

  test('input_items: ids on every item, newest first, limit and after page through; in the contract', async () => {
    fake.script({ reply: 'ok' });
    const r = await post({
      input: [
        { role: 'user', content: 'one' },
        { type: 'message', id: 'msg_client1', role: 'user', content: [{ type: 'input_text', text: 'two' }] },
        { role: 'assistant', content: 'three' },
        { role: 'user', content: 'four' },
      ],
    });
    expect(r.status).toBe(200);
    const page1 = await h.req('GET', `/v1/responses/${r.body.id}/input_items?limit=2`, { key });
    expect(page1.status).toBe(200);
    expect(contractErrors('ResponseItemList', page1.body)).toEqual([]);
    const text = (i: any) => i.content[0].text;
    expect(page1.body.data.map(text)).toEqual(['four', 'three']);
    expect(page1.body.has_more).toBe(true);
    expect(page1.body.data[1]).toMatchObject({ role: 'assistant', content: [{ type: 'output_text', text: 'three' }] });
    const page2 = await h.req('GET', `/v1/responses/${r.body.id}/input_items?limit=2&after=${page1.body.last_id}`, {
      key,
    });
    expect(page2.body.data.map(text)).toEqual(['two', 'one']);
    expect(page2.body.data[0].id).toBe('msg_client1');
    expect(page2.body.has_more).toBe(false);
    const asc = await h.req('GET', `/v1/responses/${r.body.id}/input_items?order=asc`, { key });
    expect(asc.body.data.map(text)).toEqual(['one', 'two', 'three', 'four']);
    expect(new Set(asc.body.data.map((i: any) => i.id)).size).toBe(4);
    const bad = await h.req('GET', `/v1/responses/${r.body.id}/input_items?after=msg_nope`, { key });
    expect(bad.status).toBe(400);
    // The SDK reads the same list.
    const listed = [];
    for await (const item of client.responses.inputItems.list(r.body.id)) listed.push(item);
    expect(listed).toHaveLength(4);
  });

  test('another tenant’s response is 404 everywhere; delete removes it; cancel of an answered response is 400', async () => {
    fake.script({ reply: 'mine' });
    const r = await post({ input: 'secret' });
    const other = (await h.key(['runtime:chat'])).apiKey;
    expect((await h.req('GET', `/v1/responses/${r.body.id}`, { key: other })).status).toBe(404);
    expect((await h.req('GET', `/v1/responses/${r.body.id}/input_items`, { key: other })).status).toBe(404);
    expect((await h.req('DELETE', `/v1/responses/${r.body.id}`, { key: other })).status).toBe(404);
    const cont = await post({ input: 'x', previous_response_id: r.body.id }, other);
    expect(cont.status).toBe(404);
    expect(fake.chats.length).toBe(1); // refused before any model call
    expect((await h.req('POST', `/v1/responses/${r.body.id}/cancel`, { key })).status).toBe(400);
    const del = await h.req('DELETE', `/v1/responses/${r.body.id}`, { key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: r.body.id, object: 'response', deleted: true });
    expect((await h.req('GET', `/v1/responses/${r.body.id}`, { key })).status).toBe(404);
    expect((await h.req('DELETE', `/v1/responses/${r.body.id}`, { key })).status).toBe(404);
    expect((await h.req('GET', '/v1/responses/not-an-id', { key })).status).toBe(400);
  });

  test('a chain holding more than SVC_CHAT_BODY_LIMIT is 413 before any model call; a shorter one is read', async () => {
    const app = await startExtraApp(h, { config: { chatBodyLimit: 3000 } });
    const send = async (body: unknown) => {
      const res = await fetch(`${app.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    try {
      fake.script({ reply: 'one' }, { reply: 'two' });
      const r1 = await send({ input: 'a'.repeat(1200) });
      const r2 = await send({ input: 'b'.repeat(1200), previous_response_id: r1.body.id });
      expect([r1.status, r2.status]).toEqual([200, 200]);
      const r3 = await send({ input: 'c', previous_response_id: r2.body.id });
      expect(r3.status).toBe(413);
      expect(fields(r3)).toEqual(['body.previous_response_id']);
      expect(fake.chats.length).toBe(2);
    } finally {
      await app.close();
    }
  });

  test('a chain reads no image but the latest (an edit changes it), however many its turns hold; GET gives them whole', async () => {
    const mine = await h.key(['runtime:chat']);
    const send = (body: unknown) => post(body, mine.apiKey);
    const red = (
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const image = (id: string, c: string, status = 'completed') => ({
      type: 'image_generation_call',
      id,
      status,
      result: c.repeat(700_000),
    });
    // Three turns of ~700 KB images (sent back by the client, or made): the latest is the one the second turn made,
    // after an image in its own input; the third turn's image call failed.
    fake.script({ reply: 'one' });
    const r1 = await send({ input: [image('ig_a', 'A'), { role: 'user', content: 'one' }] });
    fake.script(
      { toolCalls: [{ id: 'call_i1', name: 'image_generation', arguments: { prompt: 'A red square' } }] },
      { reply: red },
      { reply: 'two' },
    );
    const r2 = await send({
      input: [image('ig_b', 'B'), { role: 'user', content: 'two' }],
      previous_response_id: r1.body.id,
      tools: [{ type: 'image_generation' }],
    });
    expect(r2.body.output[0]).toMatchObject({ type: 'image_generation_call', status: 'completed', result: red });
    fake.script({ reply: 'three' });
    const r3 = await send({
      input: [image('ig_c', 'C', 'failed'), { role: 'user', content: 'three' }],
      previous_response_id: r2.body.id,
    });
    expect([r1.status, r2.status, r3.status]).toEqual([200, 200, 200]);

    // What a continuation reads, with a limit of 20,000 bytes: the made image whole, every other one without its result.
    const chain = await responseChain(h.db, mine.tenantId, r3.body.id, 20_000);
    if (!Array.isArray(chain)) throw new Error(`chain: ${chain}`);
    const items = chain.flatMap((t) => [...t.input_items, ...t.output]) as any[];
    expect(
      items
        .filter((i) => i.type === 'image_generation_call')
        .map((i) => [i.id === r2.body.output[0].id ? 'made' : i.id, i.result === undefined ? 'left out' : i.result]),
    ).toEqual([
      ['ig_a', 'left out'],
      ['ig_b', 'left out'],
      ['made', red],
      ['ig_c', 'left out'],
    ]);
    expect(JSON.stringify(chain).length).toBeLessThan(20_000);
    const app = await startExtraApp(h, { config: { chatBodyLimit: 20_000 } });
    try {
      const counted = await fetch(`${app.url}/v1/responses/input_tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mine.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ previous_response_id: r3.body.id, input: 'x' }),
      });
      expect(counted.status).toBe(200);
    } finally {
      await app.close();
    }

    // The client still gets every item as it was stored.
    const inputs = await h.req('GET', `/v1/responses/${r1.body.id}/input_items?order=asc`, { key: mine.apiKey });
    expect(inputs.body.data[0].result).toBe('A'.repeat(700_000));
    expect((await h.req('GET', `/v1/responses/${r2.body.id}`, { key: mine.apiKey })).body.output[0].result).toBe(red);

    // An edit continuing the chain changes the latest image.
    fake.script(
      { toolCalls: [{ id: 'e1', name: 'image_generation', arguments: { prompt: 'Bluer', edit: true } }] },
      {},
      { reply: 'Bluer now.' },
    );
    const edited = await send({
      input: 'Make it bluer.',
      previous_response_id: r3.body.id,
      tools: [{ type: 'image_generation' }],
    });
    expect(edited.body.output[0]).toMatchObject({ type: 'image_generation_call', status: 'completed' });
    const edits = fake.requests.filter((r) => r.path.endsWith('/images/edits'));
    expect(edits).toHaveLength(1);
    expect(edits[0].body.files[0].bytes.equals(Buffer.from(red, 'base64'))).toBe(true);
  });

  test('a key without runtime:chat is 403 on every responses route', async () => {
    const k = (await h.key(['runtime:tasks'])).apiKey;
    expect((await post({ input: 'x' }, k)).status).toBe(403);
    expect((await h.req('GET', '/v1/responses/resp_abc', { key: k })).status).toBe(403);
    expect((await h.req('GET', '/v1/responses/resp_abc/input_items', { key: k })).status).toBe(403);
    expect((await h.req('DELETE', '/v1/responses/resp_abc', { key: k })).status).toBe(403);
    expect(fake.chats.length).toBe(0);
  });
});

describe('request fields', () => {
  test('json_schema format, max_output_tokens, reasoning effort, verbosity reach the lane as chat fields', async () => {
    fake.script({ reply: '{"a":1}' });
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const r = await post({
      input: 'Give a',
      max_output_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'A', schema, strict: true }, verbosity: 'low' },
      safety_identifier: 'user-7',
    });
    expect(r.status).toBe(200);
    const up = fake.chats.at(-1)!.body;
    expect(up).toMatchObject({
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      reasoning_effort: 'low',
      verbosity: 'low',
      user: 'user-7',
      response_format: { type: 'json_schema', json_schema: { name: 'A', schema, strict: true } },
    });
    expect(r.body.text).toEqual({ format: { type: 'json_schema', name: 'A', schema, strict: true }, verbosity: 'low' });
    expect(contractErrors('CreateChatCompletionRequest', up)).toEqual([]);
  });

  test('include message.output_text.logprobs: the lane’s log probabilities on the text (JSON and stream deltas)', async () => {
    fake.script({ reply: 'yes no' }, { reply: 'yes no' });
    const body = { input: 'Yes or no?', include: ['message.output_text.logprobs'], top_logprobs: 2 };
    const r = await post(body);
    expect(fake.chats.at(-1)!.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    const lp = r.body.output[0].content[0].logprobs;
    expect(lp.map((t: { token: string }) => t.token).join('')).toBe('yes no');
    expect(lp[0]).toMatchObject({ logprob: -0.25 });
    expect(contractErrors('Response', r.body)).toEqual([]);
    const events = await readResponseEvents(await streamRaw(body));
    const deltas = events.filter((e) => e.event === 'response.output_text.delta');
    expect(deltas.every((e) => e.data.logprobs.length === 1)).toBe(true);
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const done = events.find((e) => e.event === 'response.output_text.done')!.data;
    expect(done.logprobs.map((t: { token: string }) => t.token).join('')).toBe('yes no');
    // Without include, none are asked for.
    fake.script({ reply: 'ok' });
    const plain = await post({ input: 'x', top_logprobs: 2 });
    expect(fake.chats.at(-1)!.body.logprobs).toBeUndefined();
    expect(plain.body.output[0].content[0].logprobs).toEqual([]);
  });

  test('an answer cut at max_output_tokens is status incomplete with its reason (JSON and stream)', async () => {
    fake.script({ reply: 'cut sho', finishReason: 'length' }, { reply: 'cut sho', finishReason: 'length' });
    const r = await post({ input: 'Write a lot', max_output_tokens: 16 });
    expect(r.body.status).toBe('incomplete');
    expect(r.body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.body.output[0].status).toBe('incomplete');
    expect(contractErrors('Response', r.body)).toEqual([]);
    const events = await readResponseEvents(await streamRaw({ input: 'Write a lot', max_output_tokens: 16 }));
    expect(events.at(-1)!.event).toBe('response.incomplete');
    expect(events.at(-1)!.data.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(streamEventErrors(events.at(-1)!.data)).toEqual([]);
  });

  test('an image part is loaded by the service and passed on as a data URL', async () => {
    const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#0a0' } })
      .png()
      .toBuffer();
    fake.script({ reply: 'A green band.' });
    const r = await post({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: `data:image/png;base64,${png.toString('base64')}`, detail: 'low' },
          ],
        },
      ],
    });
    expect(r.status).toBe(200);
    const parts = sentMessages().at(-1).content;
    expect(parts[0]).toEqual({ type: 'text', text: 'What is this?' });
    expect(parts[1].image_url.detail).toBe('low');
    expect(parts[1].image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);
    const bad = await post({
      input: [
        { role: 'user', content: 'first' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'x' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
      ],
    });
    expect(bad.status).toBe(415);
    expect(fields(bad)).toEqual(['body.input.1.content.1.image_url']);
  });

  test.each([
    [
      'a built-in tool run by OpenAI',
      { input: 'x', tools: [{ type: 'code_interpreter' }] },
      'body.tools.0.type',
      /code_interpreter/,
    ],
    [
      'a file by id and by data',
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1', file_data: 'eA==' }] }] },
      'body.input.0.content.0',
      /one of file_data, file_url and file_id/,
    ],
    [
      'an image by a malformed file id',
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] },
      'body.input.0.content.0.file_id',
      /file id/,
    ],
    ['background without store', { input: 'x', background: true, store: false }, 'body.store', /stored/],
    ['background not a boolean', { input: 'x', background: 'yes' }, 'body.background', /./],
    [
      'a conversation and previous_response_id',
      { input: 'x', conversation: 'conv_1', previous_response_id: 'resp_1' },
      'body.conversation',
      /one of conversation and previous_response_id/,
    ],
    ['an item reference', { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'body.input.0.type', /item references/],
    ['tool_choice without tools', { input: 'x', tool_choice: 'required' }, 'body.tool_choice', /needs tools/],
    ['no input', { instructions: 'x' }, 'body.input', /./],
    [
      'an image on a system message',
      { input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://a.example/x.png' }] }] },
      'body.input.0.content.0',
      /user message/,
    ],
    [
      'a malformed previous_response_id',
      { input: 'x', previous_response_id: 'chatcmpl-1' },
      'body.previous_response_id',
      /resp_/,
    ],
    ['too short max_output_tokens', { input: 'x', max_output_tokens: 4 }, 'body.max_output_tokens', /./],
    ['an unknown item type', { input: [{ type: 'telepathy', text: 'x' }] }, 'body.input.0.type', /./],
  ])('%s is 400 naming the field, before any model call', async (_name, body, path, message) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(fields(r)).toContain(path);
    expect(r.body.error).toMatch(message);
    expect(fake.chats.length).toBe(0);
  });

  test('an upstream failure before the first token is 502 (stream too); an unknown lane is 404', async () => {
    fake.script({ status: 500 }, { status: 500 });
    expect((await post({ input: 'x' })).status).toBe(502);
    const res = await streamRaw({ input: 'x' });
    expect(res.status).toBe(502);
    expect((await post({ input: 'x', model: 'gpt-nope' })).status).toBe(404);
  });

  test('an upstream that drops mid-stream ends with response.failed in the contract; nothing is stored', async () => {
    fake.script({ reply: 'a b c d e f', dropAfterChunks: 2 });
    const events = await readResponseEvents(await streamRaw({ input: 'x' }));
    const last = events.at(-1)!;
    expect(last.event).toBe('response.failed');
    expect(last.data.response.status).toBe('failed');
    expect(last.data.response.error.code).toBe('server_error');
    expect(streamEventErrors(last.data)).toEqual([]);
    const id = events[0].data.response.id;
    expect((await h.req('GET', `/v1/responses/${id}`, { key })).status).toBe(404);
  });

  test('a client that hangs up mid-stream stops the upstream call, and nothing is stored', async () => {
    fake.script({ reply: 'a b c d e f g h i j k l', chunkDelayMs: 40 });
    const ctl = new AbortController();
    const res = await fetch(`${h.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Count slowly', stream: true }),
      signal: ctl.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('response.output_text.delta')) text += new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"(resp_[A-Za-z0-9]+)"/.exec(text)![1];
    ctl.abort();
    await fake.waitFor(() => fake.chats.at(-1)!.closedEarly);
    expect(fake.chats.at(-1)!.finished).toBe(false);
    expect((await h.req('GET', `/v1/responses/${id}`, { key })).status).toBe(404);
  });

  test('X-Session-ID stores the exchange as chat completions do', async () => {
    fake.script({ reply: 'Stored answer.' });
    const sid = `resp-session-${Date.now()}`;
    const r = await post({ input: 'Remember this' }, key, { 'x-session-id': sid });
    expect(r.body.meta.session_id).toBe(sid);
    const s = await h.req('GET', `/v1/sessions/${sid}`, { key });
    expect(s.status).toBe(200);
    expect(s.body.messages.map((m: any) => m.content)).toEqual(['Remember this', 'Stored answer.']);
  });
});

describe('malformed requests', () => {
  // Values of every JSON kind, and the strings that break things (NUL, lone surrogates, ids of other shapes).
  const odd = fc.oneof(
    fc.constantFrom('', 'resp_x', 'x\u0000y', '\ud800', 'message', 'function_call', 'input_file', 'user', 'system'),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('type', 'role', 'content', 'text', 'call_id', 'name', 'output', 'id'), fc.string(), {
      maxKeys: 4,
    }),
  );
  const item = fc.oneof(
    odd,
    fc.record(
      {
        type: fc.constantFrom('message', 'function_call', 'function_call_output', 'reasoning', 'input_file', 'x'),
        role: fc.constantFrom('user', 'assistant', 'system', 'developer', 'tool', 'bot'),
        content: fc.oneof(
          odd,
          fc.array(
            fc.record(
              { type: fc.constantFrom('input_text', 'input_image', 'input_file', 'output_text', 'refusal'), text: odd },
              { requiredKeys: ['type'] },
            ),
            { maxLength: 3 },
          ),
        ),
        call_id: odd,
        name: odd,
        arguments: odd,
        output: odd,
      },
      { requiredKeys: [] },
    ),
  );

  test('never a 5xx and never a model call for a request the schema refuses (200 random bodies)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            input: fc.oneof(odd, fc.array(item, { maxLength: 4 })),
            instructions: odd,
            tools: fc.oneof(
              odd,
              fc.array(fc.record({ type: odd, name: odd, parameters: odd }), { maxLength: 2 }),
              // file_search with odd fields (its stores unknown here: 404 at best; web_search needs engines, 503 here).
              fc.array(
                fc.record(
                  {
                    type: fc.constant('file_search'),
                    vector_store_ids: fc.oneof(odd, fc.constant(['vs_unknown'])),
                    max_num_results: odd,
                    filters: fc.oneof(odd, fc.record({ type: odd, key: odd, value: odd })),
                    ranking_options: fc.oneof(odd, fc.record({ ranker: odd, score_threshold: odd })),
                  },
                  { requiredKeys: ['type'] },
                ),
                { maxLength: 2 },
              ),
            ),
            tool_choice: odd,
            text: fc.oneof(odd, fc.record({ format: odd })),
            previous_response_id: odd,
            max_output_tokens: odd,
            metadata: odd,
            stream: odd,
          },
          { requiredKeys: [] },
        ),
        async (body) => {
          const before = fake.chats.length;
          const r = await post(body);
          expect(r.status).toBeLessThan(500);
          if (r.status !== 200) expect(fake.chats.length).toBe(before);
        },
      ),
      { numRuns: 200, seed: 1127 },
    );
  });
});
