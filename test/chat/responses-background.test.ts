import OpenAI from 'openai';
import { sql } from 'slonik';
import { z } from 'zod';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors, readResponseEvents, streamEventErrors, type ResponseEvent } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { withSlowInserts } from '../helpers/db-faults';
import { startMcpPeer, type McpPeer } from '../helpers/mcp-peer';
import pino from 'pino';
import { getResponseRow, writeResponseEvents } from '../../activities/store/responses';
import type { AppContext } from '../../api/context';
import { cancelBackgroundResponse } from '../../api/routes/responses-background';

// Background responses (POST /v1/responses, background: true) run as Temporal workflows on a real worker, against a
// fake OpenAI-compatible upstream; their events are stored and streamed again from the database.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

let peer: McpPeer;
beforeAll(async () => {
  peer = await startMcpPeer();
});
afterAll(async () => {
  await peer?.close();
});

// The MCP server listens on 127.0.0.1: the fetch guard lets the service (and its worker) reach it only with this setting.
withFakeUpstream(
  { scopes: ['runtime:chat'], worker: true, resetEach: {}, env: { SVC_ALLOW_PRIVATE_FETCH: '127.0.0.1' } },
  (up) => {
    ({ fake, h, key } = up);
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);

type Ev = ResponseEvent;

const getStream = (id: string, query = '', k = key, headers: Record<string, string> = {}) =>
  fetch(`${h.url}/v1/responses/${id}?stream=true${query}`, { headers: { authorization: `Bearer ${k}`, ...headers } });
const get = (id: string, k = key) => h.req('GET', `/v1/responses/${id}`, { key: k });
const ended = (r: { body: { status: string } }) => !['queued', 'in_progress'].includes(r.body.status);
const untilEnded = (id: string) => pollUntil(() => get(id), ended, 30_000);
const untilStatus = (id: string, status: string) =>
  pollUntil(
    () => get(id),
    (r) => r.body.status === status,
    30_000,
  );
/** How many events a response's stream holds in the database. */
const storedEvents = (id: string) =>
  h.db.oneFirst(
    sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM events WHERE stream = ${`response:${id}`}`,
  );
const text = (events: Ev[]) =>
  events
    .filter((e) => e.event === 'response.output_text.delta')
    .map((e) => e.data.delta)
    .join('');

describe('background responses', () => {
  test('queued at once, answered by the worker: polled to completed, the stored events replayed in the contract', async () => {
    fake.script({
      reply: 'one two three four five',
      chunkDelayMs: 5,
      usage: { prompt_tokens: 20, completion_tokens: 5 },
    });
    const queued = await client.responses.create({ model: 'mid', input: 'Count to five', background: true });
    expect(contractErrors('Response', queued)).toEqual([]);
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [], completed_at: null });
    expect(queued.id).toMatch(/^resp_/);

    const done = await untilEnded(queued.id);
    expect(contractErrors('Response', done.body)).toEqual([]);
    expect(done.body).toMatchObject({ id: queued.id, status: 'completed', background: true, model: 'mid' });
    expect(done.body.output[0].content[0].text).toBe('one two three four five');
    expect(done.body.usage).toMatchObject({ input_tokens: 20, output_tokens: 5, total_tokens: 25 });
    expect(done.body.meta.provider).toBe('default');
    expect(fake.chats).toHaveLength(1);

    // The workflow, named by the response id, completed with the response's status.
    const result = await h.client.workflow.getHandle(queued.id).result();
    expect(result).toEqual({ status: 'completed' });

    const res = await getStream(queued.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readResponseEvents(res);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.slice(0, 3).map((e) => e.event)).toEqual([
      'response.created',
      'response.queued',
      'response.in_progress',
    ]);
    expect(events[0].data.response.status).toBe('queued');
    expect(events[2].data.response.status).toBe('in_progress');
    expect(events.at(-1)!.event).toBe('response.completed');
    expect(events.at(-1)!.data.response).toEqual(done.body);
    for (const e of events) {
      expect(e.event).toBe(e.data.type);
      expect(streamEventErrors(e.data)).toEqual([]);
    }
    expect(text(events)).toBe('one two three four five');
  });

  test('GET ...?stream=true&starting_after=N resumes after that sequence number (the SDK’s retrieve stream too)', async () => {
    fake.script({ reply: 'alpha beta gamma delta', chunkDelayMs: 5 });
    const { id } = await client.responses.create({ model: 'mid', input: 'Greek letters', background: true });
    await untilEnded(id);
    const all = await readResponseEvents(await getStream(id));
    const after = await readResponseEvents(await getStream(id, '&starting_after=2'));
    expect(after.map((e) => e.data)).toEqual(all.slice(3).map((e) => e.data));

    // Last-Event-ID (the SSE id of an event already seen) resumes the same way.
    const resumed = await readResponseEvents(await getStream(id, '', key, { 'last-event-id': all[1].id! }));
    expect(resumed.map((e) => e.data.sequence_number)).toEqual(all.slice(2).map((e) => e.data.sequence_number));

    const stream = await client.responses.retrieve(id, { stream: true, starting_after: 1 });
    const seen: any[] = [];
    for await (const e of stream) seen.push(e);
    expect(seen[0]).toMatchObject({ type: 'response.in_progress', sequence_number: 2 });
    expect(seen.at(-1)).toMatchObject({ type: 'response.completed' });
    expect(seen.at(-1).response.output_text ?? seen.at(-1).response.output[0].content[0].text).toBe(
      'alpha beta gamma delta',
    );
  });

  test('background and stream: the POST streams the stored events live, from response.created (queued) to completed', async () => {
    fake.script({ reply: 'live from the worker', chunkDelayMs: 20 });
    const res = await fetch(`${h.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mid', input: 'Say it', background: true, stream: true }),
    });
    expect(res.status).toBe(200);
    const events = await readResponseEvents(res);
    expect(events[0]).toMatchObject({ event: 'response.created', data: { response: { status: 'queued' } } });
    expect(events.at(-1)!.event).toBe('response.completed');
    expect(text(events)).toBe('live from the worker');
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
  });

  test('cancel mid-answer: cancelled at once, the upstream call stopped, the stream closed, the workflow ended', async () => {
    fake.script({ reply: 'a b c d e f g h', hangAfterChunks: 2 });
    const { id } = await client.responses.create({ model: 'mid', input: 'Never ends', background: true });
    await untilStatus(id, 'in_progress');
    // Two text deltas stored (the upstream now hangs).
    await pollUntil(
      () => storedEvents(id),
      (n) => n >= 5,
    );
    // A live reader, attached before the cancel: its stream must end.
    const live = getStream(id);
    const cancelled = await client.responses.cancel(id);
    expect(contractErrors('Response', cancelled)).toEqual([]);
    expect(cancelled).toMatchObject({ id, status: 'cancelled', background: true });
    const events = await readResponseEvents(await live);
    expect(events.some((e) => e.event === 'response.completed')).toBe(false);
    expect(events.some((e) => e.event === 'end')).toBe(false);
    expect(events.length).toBeGreaterThanOrEqual(3);

    expect(await h.client.workflow.getHandle(id).result()).toEqual({ status: 'cancelled' });
    await pollUntil(
      async () => fake.chats.at(-1)!.closedEarly,
      (c) => c,
      10_000,
    );
    expect((await get(id)).body.status).toBe('cancelled');
    // Cancelling again answers the response as it is.
    const again = await h.req('POST', `/v1/responses/${id}/cancel`, { key });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('cancelled');
  });

  test('a cancel that finds the run’s last write ended the response answers it as stored, and leaves its workflow alone', async () => {
    fake.script({ reply: 'a b c d e f g h', hangAfterChunks: 2 });
    const { id } = await client.responses.create({ model: 'mid', input: 'Nearly done', background: true });
    await untilStatus(id, 'in_progress');
    const tenantId = await h.db.oneFirst(
      sql.type(z.object({ tenant_id: z.string() }))`SELECT tenant_id FROM responses WHERE id = ${id}`,
    );
    // The cancel read the row while it ran; then the run's last write won the row lock (the store call it makes).
    const seen = (await getResponseRow(h.db, tenantId, id))!;
    expect(seen.job).not.toBeNull();
    await writeResponseEvents(h.db, {
      tenantId,
      id,
      events: [],
      response: { ...seen.response, status: 'completed' },
      end: true,
    });
    const ctx = {
      deps: { db: h.db, log: pino({ level: 'silent' }), temporal: { connection: h.connection, client: h.client } },
    } as unknown as AppContext;
    const answered = await cancelBackgroundResponse(ctx, tenantId, id, seen);
    expect(answered).toMatchObject({ id, status: 'completed' });
    // No cancel was sent: the workflow reports the end its run wrote (a cancel raced it and was reported instead).
    const handle = h.client.workflow.getHandle(id);
    const history = await handle.fetchHistory();
    expect(history.events!.some((e) => e.workflowExecutionCancelRequestedEventAttributes)).toBe(false);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test over: its upstream hangs');
  });

  test('a 5xx before the first token is retried by the workflow; a 4xx is not (failed, in the contract)', async () => {
    fake.script({ status: 500 }, { reply: 'second time lucky' });
    const { id } = await client.responses.create({ model: 'mid', input: 'Try again', background: true });
    const done = await untilEnded(id);
    expect(done.body.status).toBe('completed');
    expect(done.body.output[0].content[0].text).toBe('second time lucky');
    expect(fake.chats).toHaveLength(2);

    fake.reset();
    fake.setDefault({ status: 400 });
    const bad = await client.responses.create({ model: 'mid', input: 'Refused', background: true });
    const failed = await untilEnded(bad.id);
    expect(contractErrors('Response', failed.body)).toEqual([]);
    expect(failed.body).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(failed.body.error.message).toMatch(/rejected the request \(HTTP 400\)/);
    expect(fake.chats).toHaveLength(1);
    const events = await readResponseEvents(await getStream(bad.id));
    expect(events.map((e) => e.event)).toEqual(['response.created', 'response.queued', 'response.failed']);
    expect(events.at(-1)!.data.response).toEqual(failed.body);
  });

  test('the session (X-Session-ID) and the usage report get the answer and its tokens', async () => {
    const k = await h.key(['runtime:chat']);
    fake.script({ reply: 'remembered', usage: { prompt_tokens: 11, completion_tokens: 7 } });
    const res = await h.req('POST', '/v1/responses', {
      key: k.apiKey,
      body: { model: 'micro', input: 'Remember me', background: true },
      headers: { 'x-session-id': 'bg-session-1' },
    });
    expect(res.status).toBe(200);
    const done = await pollUntil(() => h.req('GET', `/v1/responses/${res.body.id}`, { key: k.apiKey }), ended);
    expect(done.body.status).toBe('completed');
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key: k.apiKey });
    expect(usage.body.data.find((d: { group: string }) => d.group === 'micro')).toMatchObject({
      requests: 1,
      tokens_in: 11,
      tokens_out: 7,
    });
    fake.script({ echo: true });
    const next = await h.req('POST', '/v1/responses', {
      key: k.apiKey,
      body: { model: 'micro', input: 'And now?' },
      headers: { 'x-session-id': 'bg-session-1' },
    });
    expect(next.status).toBe(200);
    const sent = fake.chats.at(-1)!.body.messages.map((m: { content: string }) => m.content);
    expect(sent).toContain('Remember me');
    expect(sent).toContain('remembered');
  });

  test('a background response in a conversation reads its items and adds its turn once answered', async () => {
    fake.setDefault({ echo: true });
    const conv = await client.conversations.create({
      items: [{ type: 'message', role: 'user', content: 'My name is Ada.' }],
    });
    // A slow database: each insert of conversation items waits 400 ms. The turn lands with the write that ends the
    // response, so whoever sees the response answered sees the turn too (it used to land after, a moment unseen).
    await withSlowInserts(h.db, 'conversation_items', 0.4, async () => {
      const { id } = await client.responses.create({
        model: 'mid',
        input: 'What is my name?',
        conversation: conv.id,
        background: true,
      });
      const done = await untilEnded(id);
      const items = await h.req('GET', `/v1/conversations/${conv.id}/items?order=asc`, { key });
      expect(done.body.status).toBe('completed');
      expect(done.body.conversation).toEqual({ id: conv.id });
      expect(items.body.data.map((i: { role: string }) => i.role)).toEqual(['user', 'user', 'assistant']);
      expect(items.body.data[2].content[0].text).toBe(done.body.output[0].content[0].text);
      const sent = fake.chats.at(-1)!.body.messages.map((m: { content: string }) => m.content);
      expect(sent).toContain('My name is Ada.');
    });
  });

  test('a shell tool in the background: its call is a shell_call in the stored events; its output continues the conversation', async () => {
    fake.script({ toolCalls: [{ id: 'call_bg1', name: 'shell', arguments: { commands: ['uptime'] } }] });
    const conv = await client.conversations.create({});
    const { id } = await client.responses.create({
      model: 'mid',
      input: 'How long has it been up?',
      tools: [{ type: 'shell', environment: { type: 'local' } }],
      conversation: conv.id,
      background: true,
    });
    const done = await untilEnded(id);
    expect(contractErrors('Response', done.body)).toEqual([]);
    expect(done.body.output).toEqual([
      expect.objectContaining({
        type: 'shell_call',
        call_id: 'call_bg1',
        action: { commands: ['uptime'], timeout_ms: null, max_output_length: null },
        environment: { type: 'local' },
      }),
    ]);
    const events = await readResponseEvents(await getStream(id));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    expect(events.find((e) => e.event === 'response.shell_call_command.done')!.data.command).toBe('uptime');

    fake.script({ reply: 'Up three days.' });
    await client.responses.create({
      model: 'mid',
      conversation: conv.id,
      tools: [{ type: 'shell' }],
      input: [
        {
          type: 'shell_call_output',
          call_id: 'call_bg1',
          output: [{ stdout: 'up 3 days', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
        },
      ],
    });
    const sent = fake.chats.at(-1)!.body.messages.slice(1);
    expect(sent.at(-2).tool_calls[0].function).toEqual({ name: 'shell', arguments: '{"commands":["uptime"]}' });
    expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_bg1', content: 'exit code 0\nstdout:\nup 3 days' });
    // The conversation's items are OpenAI's item resources.
    const items = await h.req('GET', `/v1/conversations/${conv.id}/items?order=asc`, { key });
    expect(items.body.data.map((i: { type: string }) => i.type)).toEqual([
      'message',
      'shell_call',
      'shell_call_output',
      'message',
    ]);
    for (const item of items.body.data) expect(contractErrors('ItemResource', item)).toEqual([]);
  });

  test('image_generation in the background: the worker makes the image, asks the lane again, and stores every event', async () => {
    fake.script(
      { toolCalls: [{ id: 'call_g1', name: 'image_generation', arguments: { prompt: 'A heron' } }] },
      {},
      { reply: 'A heron, as asked.' },
    );
    const queued = await client.responses.create({
      model: 'mid',
      input: 'Draw a heron.',
      background: true,
      tools: [{ type: 'image_generation', partial_images: 1 }],
    });
    expect(queued.status).toBe('queued');
    const done = await untilEnded(queued.id);
    expect(contractErrors('Response', done.body)).toEqual([]);
    expect(done.body.status).toBe('completed');
    expect(done.body.output.map((o: any) => o.type)).toEqual(['image_generation_call', 'message']);
    expect(done.body.output[0]).toMatchObject({
      status: 'completed',
      result: FAKE_PNG_B64,
      revised_prompt: 'fake: A heron',
    });
    expect(done.body.output[1].content[0].text).toBe('A heron, as asked.');
    expect(fake.requests.filter((r) => r.path.endsWith('/images/generations'))).toHaveLength(1);
    expect(fake.chats).toHaveLength(2);
    expect(fake.chats[1].body.messages.at(-1)).toMatchObject({ role: 'tool' });

    const events = await readResponseEvents(await getStream(queued.id));
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const kinds = events.map((e) => e.event);
    for (const kind of ['in_progress', 'generating', 'partial_image', 'completed'])
      expect(kinds).toContain(`response.image_generation_call.${kind}`);
    expect(events.at(-1)!.data.response).toEqual(done.body);
  });

  test('an mcp tool in the background: listed when queued, its calls made by the worker with the credentials sealed in the job', async () => {
    peer.reset();
    // The SDK's default retries: a pooled keep-alive connection the server closed while idle (a full run loads this
    // machine enough for that race) is tried again, as every OpenAI client does.
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 2 });
    const calc = {
      type: 'mcp' as const,
      server_label: 'calc',
      server_url: peer.url,
      authorization: 'secret-token-123',
      headers: { 'X-Team': 'blue-team-456' },
    };
    fake.script(
      // The lane answers slowly: the job is still stored when it is read below.
      { toolCalls: [{ id: 'call_m1', name: 'calc__whoami', arguments: {} }], delayMs: 1500 },
      { reply: 'The server knows us.' },
    );
    const queued = await client.responses.create({
      model: 'mid',
      input: 'Who am I to the server?',
      background: true,
      tools: [{ ...calc, require_approval: 'never' }],
    });
    // Listed when it was queued; the job holds the server's token and headers sealed, never in the clear.
    expect(peer.calls.map((c) => c.method)).toContain('tools/list');
    const job = await h.db.oneFirst(
      sql.type(
        z.object({ job: z.string().nullable() }),
      )`SELECT job::text AS job FROM responses WHERE id = ${queued.id}`,
    );
    expect(job).toMatch(/"mcp": ?"mcps1\./);
    expect(job).not.toContain('secret-token-123');
    expect(job).not.toContain('blue-team-456');
    const done = await untilEnded(queued.id);
    expect(contractErrors('Response', done.body)).toEqual([]);
    expect(done.body.status).toBe('completed');
    expect(done.body.output.map((o: any) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(done.body.output[1]).toMatchObject({ name: 'whoami', status: 'completed', output: 'auth=yes team=yes' });
    expect(done.body.output[2].content[0].text).toBe('The server knows us.');
    // The worker's call carried the credentials.
    const call = peer.calls.find((c) => c.method === 'tools/call')!;
    expect(call.headers.authorization).toBe('Bearer secret-token-123');
    expect(call.headers['x-team']).toBe('blue-team-456');
    // Ended, the job (and its sealed credentials) is gone; the stored events are in the contract.
    expect(
      await h.db.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM responses WHERE id = ${queued.id} AND job IS NOT NULL`),
    ).toBe(0);
    const events = await readResponseEvents(await getStream(queued.id));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['response.mcp_list_tools.completed', 'response.mcp_call.completed']),
    );
    expect(JSON.stringify(events)).not.toContain('secret-token-123');

    // Approval by default: the background response ends with the request; the approval, in a background response
    // too, makes the call once.
    peer.reset();
    fake.script({ toolCalls: [{ id: 'call_m2', name: 'calc__add', arguments: { a: 1, b: 2 } }] });
    const asking = await client.responses.create({ model: 'mid', input: '1 + 2?', background: true, tools: [calc] });
    const asked = await untilEnded(asking.id);
    expect(asked.body.output.map((o: any) => o.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    expect(peer.toolCalls).toEqual([]);
    fake.script({ reply: 'Three.' });
    const approved = await client.responses.create({
      model: 'mid',
      background: true,
      previous_response_id: asking.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: asked.body.output[1].id, approve: true }],
      tools: [calc],
    });
    const answered = await untilEnded(approved.id);
    expect(answered.body.output.map((o: any) => o.type)).toEqual(['mcp_call', 'message']);
    expect(answered.body.output[0]).toMatchObject({ name: 'add', output: '3' });
    expect(peer.toolCalls).toEqual([{ name: 'add', arguments: { a: 1, b: 2 } }]);
  });

  test('refusals: store false, a foreground response cancelled or streamed again, unknown and other tenants’ ids', async () => {
    const noStore = await h.req('POST', '/v1/responses', {
      key,
      body: { input: 'x', background: true, store: false },
    });
    expect(noStore.status).toBe(400);
    expect(noStore.body.details.map((d: { path: string }) => d.path)).toEqual(['body.store']);
    expect(fake.chats).toHaveLength(0);

    fake.script({ reply: 'foreground' });
    const fg = await client.responses.create({ model: 'mid', input: 'Now' });
    expect(fg.background).toBe(false);
    const cancel = await h.req('POST', `/v1/responses/${fg.id}/cancel`, { key });
    expect(cancel.status).toBe(400);
    const replay = await getStream(fg.id);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { details: unknown[] }).details).toEqual([
      expect.objectContaining({ path: 'query.stream' }),
    ]);

    fake.script({ reply: 'mine' });
    const { id } = await client.responses.create({ model: 'mid', input: 'Mine', background: true });
    await untilEnded(id);
    const stranger = (await h.key(['runtime:chat'])).apiKey;
    expect((await get(id, stranger)).status).toBe(404);
    expect((await getStream(id, '', stranger)).status).toBe(404);
    expect((await h.req('POST', `/v1/responses/${id}/cancel`, { key: stranger })).status).toBe(404);
    expect((await h.req('DELETE', `/v1/responses/${id}`, { key: stranger })).status).toBe(404);
    expect((await h.req('POST', '/v1/responses/resp_unknown/cancel', { key })).status).toBe(404);

    const badQuery = await h.req('GET', `/v1/responses/${id}?stream=maybe&starting_after=-1`, { key });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'query.starting_after',
      'query.stream',
    ]);
  });

  test('deleting a running background response cancels it first: gone, its workflow ended, its events removed', async () => {
    fake.script({ reply: 'x y z', hangAfterChunks: 1 });
    const { id } = await client.responses.create({ model: 'mid', input: 'Hang', background: true });
    await untilStatus(id, 'in_progress');
    const del = await h.req('DELETE', `/v1/responses/${id}`, { key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id, object: 'response', deleted: true });
    expect((await get(id)).status).toBe(404);
    expect(await h.client.workflow.getHandle(id).result()).toEqual({ status: 'cancelled' });
    expect(await storedEvents(id)).toBe(0);
  });
});
