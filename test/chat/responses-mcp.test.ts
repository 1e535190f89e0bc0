import OpenAI from 'openai';
import { sql } from 'slonik';
import { z } from 'zod';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors, readResponseEvents, streamEventErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { fields, type Harness } from '../helpers/harness';
import { startExtraApp } from '../helpers/extra-app';
import { startMcpPeer, type McpPeer } from '../helpers/mcp-peer';

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;
let peer: McpPeer;

beforeAll(async () => {
  peer = await startMcpPeer();
});
afterAll(async () => {
  await peer.close();
});
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {}, env: { SVC_ALLOW_PRIVATE_FETCH: '127.0.0.1' } }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});
beforeEach(() => peer.reset());

const post = (body: unknown) => h.req('POST', '/v1/responses', { key, body });
const calc = (extra: Record<string, unknown> = {}) => ({
  type: 'mcp' as const,
  server_label: 'calc',
  server_url: peer.url,
  ...extra,
});
/** The tool names the upstream was offered in chat request i. */
const offered = (i = -1): string[] => (fake.chats.at(i)!.body.tools ?? []).map((t: any) => t.function.name);

describe('the mcp tool: a remote MCP server’s tools, called by the model', () => {
  test('listed, offered to the lane, called without approval when require_approval is never, and answered', async () => {
    fake.script(
      {
        toolCalls: [{ id: 'call_1', name: 'calc__add', arguments: { a: 2, b: 3 } }],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      },
      { reply: 'Two and three make 5.', usage: { prompt_tokens: 20, completion_tokens: 7 } },
    );
    const res = await client.responses.create({
      model: 'svc-oracle',
      input: 'What is 2 + 3?',
      tools: [calc({ require_approval: 'never', server_description: 'A calculator.' })],
    });
    expect(contractErrors('Response', res)).toEqual([]);
    expect(res.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    const [list, call] = res.output as any[];
    expect(list.server_label).toBe('calc');
    expect(list.tools.map((t: any) => t.name)).toEqual(['add', 'fail', 'whoami', 'slow', 'odd', 'note.write']);
    expect(list.tools[0]).toMatchObject({ input_schema: { type: 'object' }, annotations: { readOnlyHint: true } });
    expect(call).toMatchObject({
      type: 'mcp_call',
      status: 'completed',
      server_label: 'calc',
      name: 'add',
      arguments: '{"a":2,"b":3}',
      output: '5',
      error: null,
    });
    expect(res.output_text).toBe('Two and three make 5.');
    // Both rounds' tokens.
    expect(res.usage).toMatchObject({ input_tokens: 30, output_tokens: 12 });
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 2, b: 3 } }]);
    // The lane saw the server's tools as functions, then the call and its answer.
    expect(fake.chats).toHaveLength(2);
    expect(offered(0)).toContain('calc__add');
    expect(offered(0).filter((n) => /^calc__note_write_[0-9a-f]{8}$/.test(n))).toHaveLength(1);
    const tool = fake.chats[0].body.tools.find((t: any) => t.function.name === 'calc__add').function;
    expect(tool.description).toContain('Adds two numbers.');
    expect(tool.description).toContain('calc: A calculator.');
    const second = fake.chats[1].body.messages.slice(-2);
    expect(second[0]).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'calc__add' } }] });
    expect(second[1]).toMatchObject({ role: 'tool', content: '5', tool_call_id: second[0].tool_calls[0].id });
    // The headers of the tool are not echoed.
    expect(res.tools[0]).toMatchObject({ type: 'mcp', server_label: 'calc', require_approval: 'never', headers: null });
  });

  test('a continued response reuses the listed tools (no second tools/list) and gives the lane the earlier call', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 1, b: 1 } }] }, { reply: '2.' });
    const first = await client.responses.create({
      input: 'one plus one',
      tools: [calc({ require_approval: 'never' })],
    });
    peer.reset();
    fake.script({ reply: 'Yes, 2.' });
    const next = await client.responses.create({
      input: 'Sure?',
      previous_response_id: first.id,
      tools: [calc({ require_approval: 'never' })],
    });
    expect(next.output.map((o) => o.type)).toEqual(['message']);
    expect(peer.calls.map((c) => c.method)).toEqual([]);
    const sent = fake.chats.at(-1)!.body.messages.map((m: any) => m.role);
    expect(sent.slice(1)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(fake.chats.at(-1)!.body.messages[3]).toMatchObject({ role: 'tool', content: '2' });
  });

  test('by default a call waits for approval: the response ends with an mcp_approval_request, nothing is called', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 4, b: 4 } }] });
    const res = await client.responses.create({ input: 'four plus four', tools: [calc()] });
    expect(contractErrors('Response', res)).toEqual([]);
    expect(res.status).toBe('completed');
    expect(res.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    const request = res.output[1] as any;
    expect(request).toMatchObject({ server_label: 'calc', name: 'add', arguments: '{"a":4,"b":4}' });
    expect(request.id).toMatch(/^mcpr_/);
    expect(peer.toolCalls).toEqual([]);
    expect(fake.chats).toHaveLength(1);
    peer.reset();

    // Approved: the call is made, once, and the lane answers with its result.
    fake.script({ reply: 'It is 8.' });
    const approved = await client.responses.create({
      previous_response_id: res.id,
      tools: [calc()],
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    });
    expect(contractErrors('Response', approved)).toEqual([]);
    expect(approved.output.map((o) => o.type)).toEqual(['mcp_call', 'message']);
    expect(approved.output[0]).toMatchObject({ name: 'add', output: '8', approval_request_id: request.id });
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 4, b: 4 } }]);
    expect(peer.calls.filter((c) => c.method === 'tools/list')).toHaveLength(0);
    const tail = fake.chats.at(-1)!.body.messages.slice(-2);
    expect(tail).toMatchObject([{ role: 'assistant' }, { role: 'tool', content: '8' }]);

    // The same approval sent again (a retried request) does not call the tool a second time.
    fake.script({ reply: 'Still 8.' });
    const again = await client.responses.create({
      previous_response_id: approved.id,
      tools: [calc()],
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    });
    expect(again.output.map((o) => o.type)).toEqual(['message']);
    expect(peer.toolCalls).toHaveLength(1);
  });

  test('a declined call is not made, and the lane hears it was declined', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 1, b: 2 } }] });
    const res = await client.responses.create({ input: 'add', tools: [calc()] });
    const request = res.output.at(-1) as any;
    fake.script({ reply: 'Understood.' });
    const declined = await client.responses.create({
      previous_response_id: res.id,
      tools: [calc()],
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' }],
    });
    expect(declined.output.map((o) => o.type)).toEqual(['message']);
    expect(peer.toolCalls).toEqual([]);
    expect(fake.chats.at(-1)!.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'The user declined this call: not now',
    });
  });

  test('require_approval never for a filter, allowed_tools, and max_tool_calls withdrawing the tools', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 1, b: 1 } }] }, { reply: 'Done.' });
    const res = await client.responses.create({
      input: 'add',
      ...({ max_tool_calls: 1 } as object),
      tools: [
        calc({
          allowed_tools: { read_only: true },
          require_approval: { never: { tool_names: ['add'] } },
        }),
      ],
    });
    // Only the read-only tool was offered, its call needed no approval, and the budget (1) told the model to call none.
    expect(offered(0)).toEqual(['calc__add']);
    expect(res.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect((res.output[0] as any).tools.map((t: any) => t.name)).toEqual([
      'add',
      'fail',
      'whoami',
      'slow',
      'odd',
      'note.write',
    ]);
    expect(fake.chats[1].body.tool_choice).toBe('none');
    expect(offered(1)).toEqual(['calc__add']);

    // A model that calls again once told to call none: the call is not made and the answer ends.
    fake.script(
      { toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 1, b: 1 } }] },
      { toolCalls: [{ id: 'c2', name: 'calc__add', arguments: { a: 2, b: 2 } }] },
    );
    peer.reset();
    const over = await post({ input: 'add', max_tool_calls: 1, tools: [calc({ require_approval: 'never' })] });
    expect(over.status).toBe(200);
    expect(over.body.output.map((o: any) => [o.type, o.status])).toEqual([
      ['mcp_list_tools', undefined],
      ['mcp_call', 'completed'],
      ['mcp_call', 'incomplete'],
    ]);
    expect(peer.toolCalls).toHaveLength(1);
  });

  test('a tool that fails: the call is failed with the tool’s error, and the lane reads it', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__fail', arguments: {} }] }, { reply: 'The tool failed.' });
    const res = await client.responses.create({ input: 'try', tools: [calc({ require_approval: 'never' })] });
    expect(contractErrors('Response', res)).toEqual([]);
    expect(res.output[1]).toMatchObject({
      type: 'mcp_call',
      status: 'failed',
      error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'the disk is full' }] },
    });
    expect(fake.chats[1].body.messages.at(-1).content).toContain('the disk is full');
  });

  test('headers and authorization reach the server; neither is echoed nor kept', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__whoami', arguments: {} }] }, { reply: 'ok' });
    const res = await client.responses.create({
      input: 'who',
      tools: [
        calc({ require_approval: 'never', authorization: 'tok-SECRET-1', headers: { 'X-Team': 'blue-SECRET-2' } }),
      ],
    });
    expect((res.output[1] as any).output).toBe('auth=yes team=yes');
    expect(peer.calls.length).toBeGreaterThan(2);
    for (const c of peer.calls)
      expect(c.headers).toMatchObject({ authorization: 'Bearer tok-SECRET-1', 'x-team': 'blue-SECRET-2' });
    const stored = await h.req('GET', `/v1/responses/${res.id}`, { key });
    expect(stored.status).toBe(200);
    const row = await h.db.oneFirst(
      sql.type(
        z.object({ r: z.string() }),
      )`SELECT response::text || input_items::text AS r FROM responses WHERE id = ${res.id}`,
    );
    expect(row).toContain('whoami');
    for (const text of [JSON.stringify(res.tools), JSON.stringify(stored.body.tools), row]) {
      expect(text).not.toContain('SECRET');
    }
  });

  test('streamed: the list, the call’s argument deltas and progress, then the answer, all in the contract', async () => {
    fake.script(
      { toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 20, b: 22 } }] },
      { reply: 'The answer is 42.' },
    );
    const res = await fetch(`${h.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'add', stream: true, tools: [calc({ require_approval: 'never' })] }),
    });
    expect(res.status).toBe(200);
    const events = await readResponseEvents(res);
    for (const e of events) {
      expect(e.event).toBe(e.data.type);
      expect(streamEventErrors(e.data)).toEqual([]);
    }
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const names = events.map((e) => e.event);
    const at = (n: string) => names.indexOf(n);
    expect(at('response.mcp_list_tools.completed')).toBeGreaterThan(at('response.mcp_list_tools.in_progress'));
    expect(at('response.mcp_call_arguments.delta')).toBeGreaterThan(at('response.mcp_list_tools.completed'));
    expect(at('response.mcp_call.in_progress')).toBeGreaterThan(at('response.mcp_call_arguments.done'));
    expect(at('response.mcp_call.completed')).toBeGreaterThan(at('response.mcp_call.in_progress'));
    expect(at('response.output_text.delta')).toBeGreaterThan(at('response.mcp_call.completed'));
    const args = events.filter((e) => e.event === 'response.mcp_call_arguments.delta').map((e) => e.data.delta);
    expect(args.join('')).toBe('{"a":20,"b":22}');
    const done = events.at(-1)!.data;
    expect(done.type).toBe('response.completed');
    expect(done.response.output.map((o: any) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(done.response.output[1]).toMatchObject({ output: '42', status: 'completed' });
    expect(done.response.output.map((_: unknown, i: number) => i)).toEqual(
      events.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.output_index),
    );
    // One connection for the response: listed and called in one MCP session.
    expect(peer.calls.filter((c) => c.method === 'initialize')).toHaveLength(1);
    // The stored response is the streamed one.
    const stored = await h.req('GET', `/v1/responses/${done.response.id}`, { key });
    expect(stored.body.output).toEqual(done.response.output);
  });

  test('streamed: a call that keeps the stream silent for over 15 s gets a keep-alive comment, the events unchanged', async () => {
    // The comment comes between the call's progress and its completion (SSE readers, the SDKs' too, skip comments).
    fake.script({ toolCalls: [{ id: 'c2', name: 'calc__slow', arguments: { ms: 15_500 } }] }, { reply: 'Again.' });
    const res = await fetch(`${h.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'wait', stream: true, tools: [calc({ require_approval: 'never' })] }),
    });
    const raw = await res.clone().text();
    const events = await readResponseEvents(res);
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    expect(events.at(-1)!.event).toBe('response.completed');
    const at = raw.indexOf(': keep-alive\n\n');
    expect(at).toBeGreaterThan(raw.indexOf('event: response.mcp_call.in_progress'));
    expect(at).toBeLessThan(raw.indexOf('event: response.mcp_call.completed'));
  }, 60_000);

  test('streamed approval: the approved call’s events come first, then the answer', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 5, b: 5 } }] });
    const asked = await client.responses.create({ input: 'add', tools: [calc()] });
    const request = asked.output[1] as any;
    fake.script({ reply: 'Ten.' });
    const res = await fetch(`${h.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        stream: true,
        previous_response_id: asked.id,
        tools: [calc()],
        input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      }),
    });
    const events = await readResponseEvents(res);
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    expect(events.map((e) => e.event).slice(0, 7)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done',
    ]);
    expect(events[6].data.item).toMatchObject({ type: 'mcp_call', output: '10', approval_request_id: request.id });
    const final = events.at(-1)!.data.response;
    expect(final.output.map((o: any) => o.type)).toEqual(['mcp_call', 'message']);
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 5, b: 5 } }]);
  });

  test('in a conversation: the list, the call and the answer become its items; the next turn lists nothing', async () => {
    const conv = await client.conversations.create({});
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 3, b: 4 } }] }, { reply: 'Seven.' });
    await client.responses.create({
      conversation: conv.id,
      input: 'add',
      tools: [calc({ require_approval: 'never' })],
    });
    const items = await client.conversations.items.list(conv.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).toEqual(['message', 'mcp_list_tools', 'mcp_call', 'message']);
    peer.reset();
    fake.script({ reply: 'Still seven.' });
    await client.responses.create({
      conversation: conv.id,
      input: 'sure?',
      tools: [calc({ require_approval: 'never' })],
    });
    expect(peer.calls.map((c) => c.method)).toEqual([]);
    expect(fake.chats.at(-1)!.body.messages.filter((m: any) => m.role === 'tool')).toEqual([
      expect.objectContaining({ content: '7' }),
    ]);
  });

  test('input_tokens counts the servers’ tools as the lane would get them', async () => {
    const count = async (tools: unknown[]) =>
      (await h.req('POST', '/v1/responses/input_tokens', { key, body: { input: 'add', tools } })).body.input_tokens;
    const without = await count([]);
    const withAll = await count([calc()]);
    const withOne = await count([calc({ allowed_tools: ['add'] })]);
    expect(withAll).toBeGreaterThan(withOne);
    expect(withOne).toBeGreaterThan(without);
    expect(fake.chats).toHaveLength(0);
  });

  test('a round with a client call and an MCP call: the next turn’s history answers every call after its turn', async () => {
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: {} },
      strict: false,
    };
    fake.script({
      toolCalls: [
        { id: 'call_w', name: 'get_weather', arguments: {} },
        { id: 'call_a', name: 'calc__add', arguments: { a: 1, b: 2 } },
      ],
    });
    const first = await client.responses.create({
      input: 'both',
      tools: [weather, calc({ require_approval: 'never' })],
    });
    expect(first.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'function_call', 'mcp_call']);
    expect(fake.chats).toHaveLength(1);
    fake.script({ reply: 'Sunny, and 3.' });
    await client.responses.create({
      previous_response_id: first.id,
      tools: [weather, calc({ require_approval: 'never' })],
      input: [{ type: 'function_call_output', call_id: 'call_w', output: 'sunny' }],
    });
    const sent = fake.chats.at(-1)!.body.messages.slice(1);
    expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    const ids = sent[1].tool_calls.map((c: any) => c.id);
    expect(ids).toHaveLength(2);
    expect(new Set([sent[2].tool_call_id, sent[3].tool_call_id])).toEqual(new Set(ids));
  });

  test('what a server writes that PostgreSQL cannot store is made storable, and the response is kept', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__odd', arguments: {} }] }, { reply: 'ok' });
    const res = await post({ input: 'odd', tools: [calc({ require_approval: 'never' })] });
    expect(res.status).toBe(200);
    const odd = res.body.output[0].tools.find((t: any) => t.name === 'odd');
    expect(odd.description).toBe('nul and a lone \ufffd surrogate');
    expect(res.body.output[1].output).toBe('odd output \ufffd');
    const stored = await h.req('GET', `/v1/responses/${res.body.id}`, { key });
    expect(stored.status).toBe(200);
    expect(stored.body.output[1].output).toBe('odd output \ufffd');
  });

  test('client, MCP, client calls in one round, and an mcp_call with OpenAI’s long id: a history the upstream takes', async () => {
    const fn = (name: string) => ({ type: 'function' as const, name, parameters: { type: 'object' }, strict: false });
    fake.script({
      toolCalls: [
        { id: 'call_a', name: 'fa', arguments: {} },
        { id: 'call_m', name: 'calc__add', arguments: { a: 1, b: 1 } },
        { id: 'call_b', name: 'fb', arguments: {} },
      ],
    });
    const first = await client.responses.create({
      input: 'three',
      tools: [fn('fa'), fn('fb'), calc({ require_approval: 'never' })],
    });
    expect(first.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'function_call', 'mcp_call', 'function_call']);
    fake.script({ reply: 'Done.' });
    const longId = `mcp_${'a'.repeat(48)}`;
    await client.responses.create({
      previous_response_id: first.id,
      tools: [fn('fa'), fn('fb'), calc({ require_approval: 'never' })],
      input: [
        { type: 'function_call_output', call_id: 'call_a', output: 'A' },
        { type: 'function_call_output', call_id: 'call_b', output: 'B' },
        { role: 'user', content: 'and from before:' },
        {
          type: 'mcp_call',
          id: longId,
          server_label: 'calc',
          name: 'add',
          arguments: '{"a":5,"b":5}',
          output: '10',
        } as never,
      ],
    });
    const sent = fake.chats.at(-1)!.body.messages.slice(1);
    expect(sent.map((m: any) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'user',
      'assistant',
      'tool',
    ]);
    expect(sent[1].tool_calls).toHaveLength(3);
    expect(new Set(sent.slice(2, 5).map((m: any) => m.tool_call_id))).toEqual(
      new Set(sent[1].tool_calls.map((c: any) => c.id)),
    );
    const replayed = sent[6].tool_calls[0].id;
    expect(replayed.length).toBeLessThanOrEqual(40);
    expect(sent[7]).toMatchObject({ role: 'tool', content: '10', tool_call_id: replayed });
  });

  test('approved calls count against max_tool_calls: with none left the model is told to call none', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 1, b: 1 } }] });
    const asked = await client.responses.create({ input: 'add', tools: [calc()] });
    fake.script({ reply: 'Two.' });
    const res = await post({
      previous_response_id: asked.id,
      max_tool_calls: 1,
      tools: [calc()],
      input: [{ type: 'mcp_approval_response', approval_request_id: (asked.output[1] as any).id, approve: true }],
    });
    expect(res.status).toBe(200);
    expect(fake.chats.at(-1)!.body.tool_choice).toBe('none');
    expect(res.body.output.map((o: any) => o.type)).toEqual(['mcp_call', 'message']);
  });

  test('more approvals than max_tool_calls allows are 400 before any server is reached, requests made up in the input too', async () => {
    // Approval requests the client wrote itself, each answered in the same input (a client that keeps its own history
    // sends the service's requests back this way, so they are read as such): the budget bounds the calls.
    const pair = (k: number) => [
      {
        type: 'mcp_approval_request',
        id: `mcpr_own_${k}`,
        server_label: 'calc',
        name: 'add',
        arguments: JSON.stringify({ a: k, b: 1 }),
      },
      { type: 'mcp_approval_response', approval_request_id: `mcpr_own_${k}`, approve: true },
    ];
    const pairs = (n: number) => Array.from({ length: n }, (_, k) => pair(k)).flat();
    const over = await post({ max_tool_calls: 1, tools: [calc()], input: pairs(3) });
    expect(over.status).toBe(400);
    expect(fields(over)).toEqual(['body.input.3.approval_request_id']);
    expect(over.body.error).toMatch(/approves 3 MCP calls.*max_tool_calls: 1\)/);
    // The default budget (16), and the most any response makes (64) whatever max_tool_calls says.
    const byDefault = await post({ tools: [calc()], input: pairs(17) });
    expect(byDefault.status).toBe(400);
    expect(fields(byDefault)).toEqual(['body.input.33.approval_request_id']);
    const capped = await post({ max_tool_calls: 1000, tools: [calc()], input: pairs(65) });
    expect(capped.status).toBe(400);
    expect(fields(capped)).toEqual(['body.input.129.approval_request_id']);
    expect(capped.body.error).toContain('64, the most one response makes');
    // Declined answers make no call and are not counted; input_tokens refuses what the response would.
    const declined = [...pairs(1), ...pair(1).slice(0, 1), { ...pair(1)[1], approve: false }];
    const counted = await h.req('POST', '/v1/responses/input_tokens', {
      key,
      body: { max_tool_calls: 1, tools: [calc()], input: [...declined, ...pair(2)] },
    });
    expect(counted.status).toBe(400);
    expect(fields(counted)).toEqual(['body.input.5.approval_request_id']);
    expect(peer.calls).toEqual([]);
    expect(fake.chats).toHaveLength(0);

    // Within the budget they are made, one call each; the budget spent, the model is told to call none.
    fake.script({ reply: 'Done.' });
    const within = await post({ max_tool_calls: 1, tools: [calc()], input: declined });
    expect(within.status).toBe(200);
    expect(within.body.output.map((o: any) => [o.type, o.status])).toEqual([
      ['mcp_list_tools', undefined],
      ['mcp_call', 'completed'],
      ['message', 'completed'],
    ]);
    expect(within.body.output[1]).toMatchObject({ approval_request_id: 'mcpr_own_0', output: '1' });
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 0, b: 1 } }]);
    expect(fake.chats.at(-1)!.body.tool_choice).toBe('none');
  });

  test('a client that keeps its own history (store: false) sends the approval request back with its answer', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 5, b: 5 } }] });
    const asked = await post({ input: 'five plus five', store: false, tools: [calc()] });
    expect(asked.body.output.map((o: any) => o.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    fake.script({ reply: 'Ten.' });
    const answered = await post({
      store: false,
      tools: [calc()],
      input: [
        { role: 'user', content: 'five plus five' },
        ...asked.body.output,
        { type: 'mcp_approval_response', approval_request_id: asked.body.output[1].id, approve: true },
      ],
    });
    expect(answered.status).toBe(200);
    expect(answered.body.output.map((o: any) => o.type)).toEqual(['mcp_call', 'message']);
    expect(answered.body.output[0]).toMatchObject({ output: '10', approval_request_id: asked.body.output[1].id });
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 5, b: 5 } }]);
  });

  test('the same approval twice in one input makes one call; approved and declined at once is 400', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 2, b: 2 } }] });
    const asked = await client.responses.create({ input: 'add', tools: [calc()] });
    const id = (asked.output[1] as any).id;
    const answer = (approve: boolean) => ({ type: 'mcp_approval_response', approval_request_id: id, approve });
    const conflict = await post({
      previous_response_id: asked.id,
      tools: [calc()],
      input: [answer(true), answer(false)],
    });
    expect(conflict.status).toBe(400);
    expect(fields(conflict)).toEqual(['body.input.1.approval_request_id']);
    fake.script({ reply: 'Four.' });
    const twice = await post({ previous_response_id: asked.id, tools: [calc()], input: [answer(true), answer(true)] });
    expect(twice.status).toBe(200);
    expect(peer.toolCalls).toHaveLength(1);
  });

  test('the SDK’s stream helper assembles a streamed approval request', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 1, b: 2 } }] });
    const final = await client.responses.stream({ input: 'add', tools: [calc()] }).finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    expect(final.output[1]).toMatchObject({ name: 'add', arguments: '{"a":1,"b":2}' });
    expect(peer.toolCalls).toEqual([]);
  });
});

describe('the mcp tool: what is refused, and upstream failures', () => {
  test('bad tool entries are 400 naming the field, before any server is reached', async () => {
    const cases: Array<[unknown, string]> = [
      [{ type: 'mcp', server_label: 'x', connector_id: 'connector_gmail' }, 'body.tools.0.connector_id'],
      [{ type: 'mcp', server_label: 'x' }, 'body.tools.0.server_url'],
      [{ type: 'mcp', server_label: 'bad label', server_url: peer.url }, 'body.tools.0.server_label'],
      [{ type: 'mcp', server_label: 'x', server_url: 'ftp://example.com/' }, 'body.tools.0.server_url'],
      [
        { type: 'mcp', server_label: 'x', server_url: peer.url, headers: { 'X-A': 'a\r\nb' } },
        'body.tools.0.headers.X-A',
      ],
      [
        { type: 'mcp', server_label: 'x', server_url: peer.url, headers: { 'X-A': 'a\u0001b' } },
        'body.tools.0.headers.X-A',
      ],
      [
        { type: 'mcp', server_label: 'x', server_url: peer.url, authorization: 'tok\u2028en' },
        'body.tools.0.authorization',
      ],
      [
        { type: 'mcp', server_label: 'x', server_url: peer.url, headers: { Host: 'intranet' } },
        'body.tools.0.headers.Host',
      ],
      [
        { type: 'mcp', server_label: 'x', server_url: peer.url, headers: { 'Content-Length': '0' } },
        'body.tools.0.headers.Content-Length',
      ],
      [
        { type: 'mcp', server_label: 'x', server_url: peer.url, require_approval: 'sometimes' },
        'body.tools.0.require_approval',
      ],
    ];
    for (const [tool, path] of cases) {
      const res = await post({ input: 'hi', tools: [tool] });
      expect(res.status).toBe(400);
      expect(fields(res)).toContain(path);
    }
    const twice = await post({ input: 'hi', tools: [calc(), calc()] });
    expect(twice.status).toBe(400);
    const unknownModel = await post({ model: 'no-such-lane', input: 'hi', tools: [calc()] });
    expect(unknownModel.status).toBe(404);
    expect(peer.calls).toEqual([]);
    expect(fake.chats).toHaveLength(0);
  });

  test('an approval for no request of the conversation is 400; a server that is down is 502; the guard refuses 400', async () => {
    const unknown = await post({
      input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nope', approve: true }],
      tools: [calc()],
    });
    expect(unknown.status).toBe(400);
    expect(fields(unknown)).toEqual(['body.input.0.approval_request_id']);

    const down = await post({ input: 'hi', tools: [calc({ server_url: 'http://127.0.0.1:9/mcp' })] });
    expect(down.status).toBe(502);
    expect(fields(down)).toEqual(['body.tools.0.server_url']);
    expect(down.body.error).toContain('127.0.0.1:9');

    // A server that answers, but not MCP (the fake model upstream has no /mcp).
    const notMcp = await post({ input: 'hi', tools: [calc({ server_url: `${fake.url}/mcp` })] });
    expect(notMcp.status).toBe(502);
    expect(fields(notMcp)).toEqual(['body.tools.0.server_url']);
    expect(notMcp.body.error).toMatch(/HTTP 404/);

    // A local name is refused even when it would resolve to an allowed address (the allow list names 127.0.0.1).
    const local = await post({
      input: 'hi',
      tools: [calc({ server_url: peer.url.replace('127.0.0.1', 'localhost') })],
    });
    expect(local.status).toBe(400);
    expect(fields(local)).toEqual(['body.tools.0.server_url']);

    const guarded = await startExtraApp(h, { config: { allowPrivateFetch: false } });
    try {
      const res = await fetch(`${guarded.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'hi', tools: [calc()] }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { details: Array<{ path: string }> };
      expect(body.details.map((d) => d.path)).toEqual(['body.tools.0.server_url']);
    } finally {
      await guarded.close();
    }
    expect(peer.calls).toEqual([]);
    expect(fake.chats).toHaveLength(0);
  });

  test('more tools than a model takes (128, the client’s and the servers’) is 400 pointing to allowed_tools', async () => {
    const own = Array.from({ length: 124 }, (_, i) => ({ type: 'function', name: `f${i}` }));
    const res = await post({ input: 'x', tools: [...own, calc()] });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['body.tools.124.allowed_tools']);
    expect(res.body.error).toContain('130');
    expect(fake.chats).toHaveLength(0);
  });

  test('tool_choice names an mcp server’s tool; an unknown server_label is 400', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'calc__add', arguments: { a: 0, b: 0 } }] });
    await client.responses.create({
      input: 'add',
      tools: [calc()],
      tool_choice: { type: 'mcp', server_label: 'calc', name: 'add' },
    });
    expect(fake.chats.at(-1)!.body.tool_choice).toEqual({ type: 'function', function: { name: 'calc__add' } });
    const bad = await post({ input: 'x', tools: [calc()], tool_choice: { type: 'mcp', server_label: 'other' } });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(['body.tool_choice.server_label']);
    const filtered = await post({
      input: 'x',
      tools: [calc({ allowed_tools: ['fail'] })],
      tool_choice: { type: 'mcp', server_label: 'calc', name: 'add' },
    });
    expect(filtered.status).toBe(400);
    expect(fields(filtered)).toEqual(['body.tool_choice.name']);
  });
});
