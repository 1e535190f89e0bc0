import fc from 'fast-check';
import OpenAI, { toFile } from 'openai';
import { sql } from 'slonik';
import { z } from 'zod';
import { setLimits } from '../../activities/store/rate-limits';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { withFirstWriteFailing } from '../helpers/db-faults';

// OpenAI's Batch API: a JSONL file answered by a Temporal workflow on a real worker, against a fake OpenAI-compatible
// upstream; results read back through the Files API.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream(
  { scopes: ['runtime:chat'], worker: true, resetEach: { reply: 'ok' }, env: { SVC_BATCH_MAX_REQUESTS: '100' } },
  (up) => {
    ({ fake, h, key } = up);
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);

/** A batch line asking `url` for `body`. */
const lineTo = (url: string, id: string, body: Record<string, unknown>) => ({
  custom_id: id,
  method: 'POST',
  url,
  body,
});
const chatLine = (id: string, content: string, extra: Record<string, unknown> = {}) =>
  lineTo('/v1/chat/completions', id, { model: 'mid', messages: [{ role: 'user', content }], ...extra });
const jsonl = (lines: unknown[]) =>
  Buffer.from(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
/** A batch of `lines` (uploaded as its input file) to `endpoint`. */
const batchOf = async (endpoint: OpenAI.BatchCreateParams['endpoint'], lines: unknown[]) =>
  client.batches.create({ input_file_id: (await inputFile(lines)).id, endpoint, completion_window: '24h' });
async function inputFile(lines: unknown[], c = client, purpose: 'batch' | 'user_data' = 'batch') {
  return c.files.create({ file: await toFile(jsonl(lines), 'input.jsonl'), purpose });
}
const ended = (b: { status: string }) => ['completed', 'failed', 'cancelled', 'expired'].includes(b.status);
const untilEnded = (id: string) => pollUntil(() => client.batches.retrieve(id), ended, 60_000);
async function readLines(fileId: string | null | undefined, c = client): Promise<any[]> {
  if (!fileId) return [];
  const text = await (await c.files.content(fileId)).text();
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('/v1/batches', () => {
  test('chat completions: created in progress, answered by the workflow, results in the output file in line order', async () => {
    fake.onRequest((r) => ({
      reply: `answer to ${r.body.messages.at(-1).content}`,
      usage: { prompt_tokens: 10, completion_tokens: 2 },
    }));
    const file = await inputFile([chatLine('a', 'one'), chatLine('b', 'two'), chatLine('c', 'three')]);
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(contractErrors('Batch', batch)).toEqual([]);
    expect(batch).toMatchObject({
      object: 'batch',
      status: 'in_progress',
      request_counts: { total: 3, completed: 0, failed: 0 },
    });
    expect(batch.id).toMatch(/^batch_/);

    const done = await untilEnded(batch.id);
    expect(contractErrors('Batch', done)).toEqual([]);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 3, completed: 3, failed: 0 },
      metadata: { job: 'nightly' },
      usage: { input_tokens: 30, output_tokens: 6, total_tokens: 36 },
    });
    expect(done.error_file_id ?? undefined).toBeUndefined();
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(await h.client.workflow.getHandle(batch.id).result()).toEqual({ status: 'completed' });

    const out = await readLines(done.output_file_id);
    expect(out.map((l) => l.custom_id)).toEqual(['a', 'b', 'c']);
    for (const l of out) {
      expect(l).toMatchObject({ response: { status_code: 200 }, error: null });
      expect(l.id).toMatch(/^batch_req_/);
      expect(contractErrors('CreateChatCompletionResponse', l.response.body)).toEqual([]);
    }
    expect(out.map((l) => l.response.body.choices[0].message.content)).toEqual([
      'answer to one',
      'answer to two',
      'answer to three',
    ]);
    // Every line went through the persona, as a chat completion does.
    expect(fake.chats.every((c) => c.body.messages[0].role === 'system')).toBe(true);
    const output = await client.files.retrieve(done.output_file_id!);
    expect(output).toMatchObject({ purpose: 'batch_output', filename: `${batch.id}_output.jsonl` });

    const walked: string[] = [];
    for await (const b of client.batches.list({ limit: 1 })) walked.push(b.id);
    expect(walked[0]).toBe(batch.id);
    expect(new Set(walked).size).toBe(walked.length);
    const list = await h.req('GET', '/v1/batches?limit=1', { key });
    expect(contractErrors('ListBatchesResponse', list.body)).toEqual([]);
    expect(list.body.data[0].id).toBe(batch.id);
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key });
    expect(usage.body.data.find((d: { group: string }) => d.group === 'mid')).toMatchObject({
      requests: 3,
      tokens_in: 30,
      tokens_out: 6,
    });
  });

  test('a finish that fails once is retried whole: one output file, the batch completed (no file left by the failure)', async () => {
    // A database fault: the first write that ends a batch fails. Its files and its end are one transaction, so the
    // retry writes them once (the files were committed alone before, and the retry wrote a second set).
    const { fired } = await withFirstWriteFailing(
      h.db,
      { table: 'batches', op: 'UPDATE', when: 'NEW.status = $kind AND OLD.status <> $kind', kinds: ['completed'] },
      async () => {
        const batch = await batchOf('/v1/chat/completions', [chatLine('a', 'one'), chatLine('b', 'two')]);
        const done = await untilEnded(batch.id);
        expect(done.status).toBe('completed');
        expect((await readLines(done.output_file_id)).map((l) => l.custom_id)).toEqual(['a', 'b']);
        const files = await h.db.anyFirst(sql.type(z.object({ id: z.string() }))`
          SELECT id FROM files WHERE filename = ${`${batch.id}_output.jsonl`}`);
        expect(files).toEqual([done.output_file_id]);
      },
    );
    expect(fired).toEqual(['completed']);
  });

  test('an outcome write that fails once is tried again: each line asked once, recorded once, charged once', async () => {
    // A database fault: the first write of an outcome fails (the whole write rolls back). Before, every later write of
    // the attempt chained on the failed one and was dropped; the attempt answered the rest for nothing, failed at its
    // end, and the retry asked the upstream again for every line (about 2N requests, N charged).
    const k = await h.key(['runtime:chat']);
    const c = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: k.apiKey, maxRetries: 0 });
    fake.onRequest((r) => ({
      reply: `answer to ${r.body.messages.at(-1).content}`,
      usage: { prompt_tokens: 10, completion_tokens: 2 },
    }));
    const N = 100;
    const lines = Array.from({ length: N }, (_, n) => chatLine(`l${n}`, `line ${n}`));
    const { result: done, fired } = await withFirstWriteFailing(
      h.db,
      {
        table: 'batch_requests',
        op: 'UPDATE',
        when: "OLD.status = 'pending' AND NEW.status = $kind",
        kinds: ['completed'],
      },
      async () => {
        const file = await inputFile(lines, c);
        const created = await c.batches.create({
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        return pollUntil(() => c.batches.retrieve(created.id), ended, 60_000);
      },
    );
    expect(fired).toEqual(['completed']);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: N, completed: N, failed: 0 },
      usage: { input_tokens: N * 10, output_tokens: N * 2 },
    });
    // The upstream was asked at most once a line and once for each lane's request in flight (SVC_BATCH_CONCURRENCY).
    const asked = fake.chats.filter((r) => String(r.body.messages.at(-1).content).startsWith('line '));
    expect(asked.length).toBeLessThanOrEqual(N + 4);
    const out = await readLines(done.output_file_id, c);
    expect(out.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    expect(out.map((l) => l.response.body.choices[0].message.content)).toEqual(
      lines.map((_, n) => `answer to line ${n}`),
    );
    // Charged once: the usage report has each line once under its lane, with its tokens.
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key: k.apiKey });
    expect(usage.body.data.find((d: { group: string }) => d.group === 'mid')).toMatchObject({
      requests: N,
      tokens_in: N * 10,
      tokens_out: N * 2,
    });
  });

  test('two outcome writes failing in a row stop the run; the retry resumes with what was not recorded', async () => {
    // Two one-shot faults on the same write: the first write fails, its retry fails too, so the attempt stops its
    // lanes, records what it holds and fails; Temporal's retry answers only what is still pending. Each answer takes
    // 100 ms (about 40 a second on four lanes), so the lanes are still running at the second failure.
    const k = await h.key(['runtime:chat']);
    const c = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: k.apiKey, maxRetries: 0 });
    fake.onRequest((r) => ({
      reply: `answer to ${r.body.messages.at(-1).content}`,
      usage: { prompt_tokens: 10, completion_tokens: 2 },
      delayMs: 100,
    }));
    const N = 100;
    const lines = Array.from({ length: N }, (_, n) => chatLine(`m${n}`, `row ${n}`));
    const { result: done, fired } = await withFirstWriteFailing(
      h.db,
      {
        table: 'batch_requests',
        op: 'UPDATE',
        when: "OLD.status = 'pending' AND NEW.status = $kind",
        kinds: ['completed', 'completed'],
      },
      async () => {
        const created = await c.batches.create({
          input_file_id: (await inputFile(lines, c)).id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        return pollUntil(() => c.batches.retrieve(created.id), ended, 60_000);
      },
    );
    expect(fired).toEqual(['completed', 'completed']);
    // The run stopped and was retried once: its activity's last start is its second attempt.
    const history = (await h.client.workflow.getHandle(done.id).fetchHistory()).events ?? [];
    const starts = history.flatMap((e) =>
      e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
    );
    expect(starts[0]).toBe(2);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: N, completed: N, failed: 0 },
      usage: { input_tokens: N * 10, output_tokens: N * 2 },
    });
    const asked = fake.chats.filter((r) => String(r.body.messages.at(-1).content).startsWith('row '));
    expect(asked.length).toBeLessThanOrEqual(N + 4);
    const out = await readLines(done.output_file_id, c);
    expect(out.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key: k.apiKey });
    expect(usage.body.data.find((d: { group: string }) => d.group === 'mid')).toMatchObject({
      requests: N,
      tokens_in: N * 10,
      tokens_out: N * 2,
    });
  });

  test('a line the upstream refuses ends in the error file; a 5xx is tried again and answered', async () => {
    let fiveHundreds = 0;
    fake.onRequest((r) => {
      const text = r.body.messages.at(-1).content;
      if (text === 'refuse me') return { status: 400 };
      if (text === 'flaky' && fiveHundreds++ === 0) return { status: 500 };
      return { reply: 'fine' };
    });
    const batch = await batchOf('/v1/chat/completions', [
      chatLine('ok', 'hello'),
      chatLine('bad', 'refuse me'),
      chatLine('flaky', 'flaky'),
    ]);
    const done = await untilEnded(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });
    expect((await readLines(done.output_file_id)).map((l) => l.custom_id)).toEqual(['ok', 'flaky']);
    const errors = await readLines(done.error_file_id);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      custom_id: 'bad',
      response: { status_code: 502, body: { error: { code: 'upstream_error' } } },
    });
    expect(errors[0].response.body.error.message).toMatch(/HTTP 400/);
    expect(fiveHundreds).toBe(2);
  });

  test('a slow request holds one lane only: the requests after it are answered and recorded meanwhile', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fake.onRequest((r) => (r.body.messages.at(-1).content === 'slow' ? { reply: 'late', gate } : { reply: 'quick' }));
    const lines = [chatLine('slow', 'slow'), ...Array.from({ length: 60 }, (_, i) => chatLine(`q${i}`, 'quick'))];
    const batch = await client.batches.create({
      input_file_id: (await inputFile(lines)).id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    // More than a page (50) past the slow one, while it is still unanswered.
    const progress = await pollUntil(
      () => client.batches.retrieve(batch.id),
      (b) => b.request_counts!.completed === 60,
    );
    expect(progress.status).toBe('in_progress');
    release();
    const done = await untilEnded(batch.id);
    expect(done.request_counts).toEqual({ total: 61, completed: 61, failed: 0 });
    expect((await readLines(done.output_file_id)).map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
  });

  test('chat lines with store: true are stored chat completions under their output id; the others are not', async () => {
    const batch = await batchOf('/v1/chat/completions', [
      chatLine('kept', 'keep me', { store: true, metadata: { source: 'batch' } }),
      chatLine('plain', 'not me'),
    ]);
    const done = await untilEnded(batch.id);
    expect(done.status).toBe('completed');
    const [kept, plain] = await readLines(done.output_file_id);
    const stored = await client.chat.completions.retrieve(kept.response.body.id);
    expect(stored).toMatchObject({
      id: kept.response.body.id,
      choices: kept.response.body.choices,
      metadata: { source: 'batch' },
      request_id: kept.response.request_id,
    });
    const messages = await client.chat.completions.messages.list(stored.id);
    expect(messages.data.map((m) => [m.role, m.content])).toEqual([['user', 'keep me']]);
    await expect(client.chat.completions.retrieve(plain.response.body.id)).rejects.toMatchObject({ status: 404 });
  });

  test('text completion lines answer as /v1/completions does; a stream or an unknown lane fails the batch', async () => {
    const line = (id: string, body: Record<string, unknown>) =>
      lineTo('/v1/completions', id, { model: 'mid', ...body });
    const batch = await batchOf('/v1/completions', [
      line('t1', { prompt: 'Once' }),
      line('t2', { prompt: ['a', 'b'], echo: true }),
    ]);
    const done = await untilEnded(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const out = await readLines(done.output_file_id);
    for (const l of out) expect(contractErrors('CreateCompletionResponse', l.response.body)).toEqual([]);
    expect(out.map((l) => l.response.body.choices.map((c: { text: string }) => c.text))).toEqual([
      ['ok'],
      ['aok', 'bok'],
    ]);

    const failed = await batchOf('/v1/completions', [
      line('s', { prompt: 'x', stream: true }),
      line('m', { prompt: 'x', model: 'nope' }),
    ]);
    expect(failed.status).toBe('failed');
    expect(failed.errors?.data?.map((e) => [e.line, e.code, e.param])).toEqual([
      [1, 'invalid_request', 'body.stream'],
      [2, 'model_not_found', null],
    ]);
  });

  test('moderation lines answer as /v1/moderations does; a provider failure is the line’s error', async () => {
    const line = (id: string, input: unknown) => lineTo('/v1/moderations', id, { input });
    const batch = await batchOf('/v1/moderations', [line('m1', ['fine', 'kill it']), line('m2', 'status:400')]);
    const done = await untilEnded(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
    const [ok] = await readLines(done.output_file_id);
    expect(contractErrors('CreateModerationResponse', ok.response.body)).toEqual([]);
    expect(ok.response.body.results.map((r: { flagged: boolean }) => r.flagged)).toEqual([false, true]);
    const [failed] = await readLines(done.error_file_id);
    expect(failed).toMatchObject({ custom_id: 'm2', response: { status_code: 502 } });
  });

  test('embeddings lines answer as /v1/embeddings does', async () => {
    const batch = await batchOf('/v1/embeddings', [
      { custom_id: 'e1', method: 'POST', url: '/v1/embeddings', body: { input: 'first' } },
      { custom_id: 'e2', method: 'POST', url: '/v1/embeddings', body: { input: ['second', 'third'] } },
    ]);
    const done = await untilEnded(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const out = await readLines(done.output_file_id);
    expect(out.map((l) => l.response.body.data.length)).toEqual([1, 2]);
    for (const l of out) expect(contractErrors('CreateEmbeddingResponse', l.response.body)).toEqual([]);
  });

  test('responses lines answer as /v1/responses does, stored unless store is false; continuations checked', async () => {
    fake.onRequest((r) =>
      r.body.tools
        ? { toolCalls: [{ id: 'call_b1', name: 'apply_patch', arguments: { type: 'delete_file', path: 'x.txt' } }] }
        : { reply: `re: ${r.body.messages.at(-1).content}`, usage: { prompt_tokens: 5, completion_tokens: 1 } },
    );
    const line = (id: string, body: Record<string, unknown>) => lineTo('/v1/responses', id, body);
    const batch = await batchOf('/v1/responses', [
      line('r1', { model: 'mid', input: 'first', metadata: { n: '1' } }),
      line('r2', { model: 'mid', input: 'second', store: false }),
      line('r3', { model: 'mid', input: 'remove x.txt', tools: [{ type: 'apply_patch' }] }),
    ]);
    const done = await untilEnded(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });
    const out = await readLines(done.output_file_id);
    for (const l of out) expect(contractErrors('Response', l.response.body)).toEqual([]);
    const [r1, r2, r3] = out.map((l) => l.response.body);
    // A built-in client tool's call is its own item in a batch answer too.
    expect(r3.output).toEqual([
      expect.objectContaining({
        type: 'apply_patch_call',
        call_id: 'call_b1',
        operation: { type: 'delete_file', path: 'x.txt' },
      }),
    ]);
    expect(r1).toMatchObject({ status: 'completed', metadata: { n: '1' }, model: 'mid' });
    expect(r1.output[0].content[0].text).toBe('re: first');
    expect((await h.req('GET', `/v1/responses/${r1.id}`, { key })).body).toEqual(r1);
    expect((await h.req('GET', `/v1/responses/${r2.id}`, { key })).status).toBe(404);
    // A stored batch answer continues like any response.
    fake.onRequest(undefined);
    fake.setDefault({ echo: true });
    const next = await client.responses.create({ model: 'mid', input: 'and then?', previous_response_id: r1.id });
    expect(next.output_text).toContain('re: first');

    const failed = await batchOf('/v1/responses', [
      line('x', { input: 'y', previous_response_id: 'resp_unknown' }),
      line('z', { input: 'y', stream: true }),
      line('m', {
        input: 'y',
        tools: [{ type: 'mcp', server_label: 's', server_url: 'http://127.0.0.1:9/mcp', require_approval: 'never' }],
      }),
    ]);
    expect(failed.status).toBe('failed');
    expect(failed.errors!.data!.map((e) => [e.line, e.code, e.param])).toEqual([
      [1, 'not_found', 'body.previous_response_id'],
      [2, 'invalid_request', 'body.stream'],
      [3, 'invalid_request', 'body.tools.0'],
    ]);
  });

  test('a /v1/responses line with image_generation: the worker makes the image between the lane’s rounds', async () => {
    fake.script(
      { toolCalls: [{ id: 'call_g1', name: 'image_generation', arguments: { prompt: 'A kite' } }] },
      {},
      { reply: 'A kite.' },
    );
    const batch = await batchOf('/v1/responses', [
      lineTo('/v1/responses', 'img', {
        model: 'mid',
        input: 'Draw a kite.',
        tools: [{ type: 'image_generation', output_format: 'webp' }],
      }),
    ]);
    const done = await untilEnded(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });
    const [out] = await readLines(done.output_file_id);
    const body = out.response.body;
    expect(contractErrors('Response', body)).toEqual([]);
    expect(body.output.map((o: any) => [o.type, o.status])).toEqual([
      ['image_generation_call', 'completed'],
      ['message', 'completed'],
    ]);
    expect(body.output[0]).toMatchObject({ output_format: 'webp', revised_prompt: 'fake: A kite' });
    expect(Buffer.from(body.output[0].result, 'base64').subarray(8, 12).toString()).toBe('WEBP');
    expect(fake.requests.filter((r) => r.path.endsWith('/images/generations'))).toHaveLength(1);
    expect(fake.chats).toHaveLength(2);
  });

  test('invalid lines fail the batch with their line numbers; nothing is answered', async () => {
    const batch = await batchOf('/v1/chat/completions', [
      chatLine('a', 'fine'),
      '{not json',
      { ...chatLine('b', 'x'), url: '/v1/embeddings' },
      chatLine('a', 'duplicate id'),
      { custom_id: 'c', method: 'POST', url: '/v1/chat/completions', body: { model: 'mid' } },
      chatLine('d', 'x', { model: 'gpt-nope' }),
      chatLine('e', 'x', { stream: true }),
      { custom_id: 'f', method: 'GET', url: '/v1/chat/completions', body: {} },
      chatLine('g', 'a NUL \u0000 here'),
    ]);
    expect(contractErrors('Batch', batch)).toEqual([]);
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).toBeGreaterThan(0);
    expect(batch.errors!.data!.map((e) => [e.line, e.code])).toEqual([
      [2, 'invalid_json_line'],
      [3, 'mismatched_url'],
      [4, 'duplicate_custom_id'],
      [5, 'invalid_request'],
      [6, 'model_not_found'],
      [7, 'invalid_request'],
      [8, 'invalid_request'],
      [9, 'invalid_request'],
    ]);
    expect(batch.errors!.data![7].param).toBe('body.messages.0.content');
    expect(batch.errors!.data![3].param).toBe('body.messages');
    expect(batch.errors!.data![5].param).toBe('body.stream');
    expect(fake.chats).toHaveLength(0);
    await expect(h.client.workflow.getHandle(batch.id).describe()).rejects.toThrow();
  });

  test('refusals: a file of another purpose, an unknown or another tenant’s file, an endpoint not taken, too many lines', async () => {
    const userData = await inputFile([chatLine('a', 'x')], client, 'user_data');
    const create = (body: Record<string, unknown>, k = key) => h.req('POST', '/v1/batches', { key: k, body });
    const base = { endpoint: '/v1/chat/completions', completion_window: '24h' };
    const wrongPurpose = await create({ ...base, input_file_id: userData.id });
    expect(wrongPurpose.status).toBe(400);
    expect(wrongPurpose.body.error).toMatch(/purpose batch/);
    expect((await create({ ...base, input_file_id: 'file-unknown' })).status).toBe(404);
    const theirs = await inputFile([chatLine('a', 'x')]);
    const stranger = (await h.key(['runtime:chat'])).apiKey;
    expect((await create({ ...base, input_file_id: theirs.id }, stranger)).status).toBe(404);
    const bad = await create({ input_file_id: 'nope', endpoint: '/v1/videos', completion_window: '48h' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'body.completion_window',
      'body.endpoint',
      'body.input_file_id',
    ]);
    const many = await inputFile(Array.from({ length: 101 }, (_, i) => chatLine(`l${i}`, 'x')));
    const tooMany = await create({ ...base, input_file_id: many.id });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatch(/SVC_BATCH_MAX_REQUESTS/);
    expect(fake.chats).toHaveLength(0);
  });

  test('cancel: cancelling at once, then cancelled with the answered lines; the upstream call stopped', async () => {
    fake.onRequest((r) => (r.body.messages.at(-1).content === 'slow' ? { hang: true } : { reply: 'quick' }));
    const lines = [chatLine('q', 'quick'), ...Array.from({ length: 8 }, (_, i) => chatLine(`s${i}`, 'slow'))];
    const batch = await client.batches.create({
      input_file_id: (await inputFile(lines)).id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    // The quick line answered, four slow ones hanging (SVC_BATCH_CONCURRENCY).
    await fake.waitFor(() => fake.chats.length === 5, 10_000);
    const cancelling = await client.batches.cancel(batch.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toBeGreaterThan(0);
    const done = await untilEnded(batch.id);
    expect(done.status).toBe('cancelled');
    expect(done.cancelled_at).toBeGreaterThan(0);
    expect(done.request_counts).toEqual({ total: 9, completed: 1, failed: 0 });
    expect((await readLines(done.output_file_id)).map((l) => l.custom_id)).toEqual(['q']);
    expect(fake.chats).toHaveLength(5);
    expect(await h.client.workflow.getHandle(batch.id).result()).toEqual({ status: 'cancelled' });
    await pollUntil(
      async () => fake.chats.filter((c) => c.body.messages.at(-1).content === 'slow'),
      (cs) => cs.every((c) => c.closedEarly),
    );
    // Cancelling again answers the batch as it is; another tenant's cancel is 404.
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelled');
    const stranger = (await h.key(['runtime:chat'])).apiKey;
    expect((await h.req('POST', `/v1/batches/${batch.id}/cancel`, { key: stranger })).status).toBe(404);
    expect((await h.req('GET', `/v1/batches/${batch.id}`, { key: stranger })).status).toBe(404);
  });

  test('a token budget admits a batch, is charged its requests’ tokens as they run, then refuses the next (429)', async () => {
    const k = await h.key(['runtime:chat']);
    await setLimits(h.db, k.tenantId, k.keyId, { tokens_per_day: 50 });
    const c = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: k.apiKey, maxRetries: 0 });
    fake.onRequest(() => ({ reply: 'ok', usage: { prompt_tokens: 20, completion_tokens: 10 } }));
    const file = await inputFile([chatLine('a', 'one'), chatLine('b', 'two')], c);
    const create = () =>
      h.req('POST', '/v1/batches', {
        key: k.apiKey,
        body: { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
    const first = await create();
    expect(first.status).toBe(200);
    const done = await pollUntil(() => c.batches.retrieve(first.body.id), ended);
    expect(done.usage).toMatchObject({ total_tokens: 60 });
    // 60 tokens charged to the day the batch was admitted in: over the budget of 50 (the API sees the worker's charge
    // at its next counter sync, so one more batch may be admitted before it does).
    const spent = await pollUntil(create, (r) => r.status === 429, 15_000);
    expect(spent.body.error).toMatch(/tokens per day/);
    expect(spent.headers.get('retry-after')).toBeTruthy();
    // The usage report has the requests under their lane, no row for the batch's creation.
    const usage = await h.req('GET', '/v1/usage?group_by=lane', { key: k.apiKey });
    expect(usage.body.data.map((d: { group: string }) => d.group)).toEqual(['mid']);
    const [mid] = usage.body.data;
    expect(mid.requests).toBeGreaterThanOrEqual(2);
    expect(mid).toMatchObject({ tokens_in: mid.requests * 20, tokens_out: mid.requests * 10 });
  });

  test('random malformed input files (60, fixed seed): never a 5xx; a failed batch lists its errors by line', async () => {
    const odd = fc.oneof(
      fc.constantFrom('', 'x\u0000y', '\ud800', '/v1/chat/completions', '/v1/responses', 'POST', 'file-x', 'resp_x'),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('role', 'content', 'type', 'text', 'file_id', 'image_url'), fc.string(), {
        maxKeys: 3,
      }),
    );
    const body = fc.dictionary(
      fc.constantFrom('model', 'messages', 'input', 'n', 'stream', 'tools', 'previous_response_id', 'instructions'),
      odd,
      { maxKeys: 4 },
    );
    const lineValue = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.record({ custom_id: odd, method: odd, url: odd, body: fc.oneof(body, odd) }, { requiredKeys: [] }),
      fc.record({
        custom_id: fc.string({ minLength: 1, maxLength: 8 }),
        method: fc.constant('POST'),
        url: fc.constantFrom('/v1/chat/completions', '/v1/responses', '/v1/embeddings'),
        body,
      }),
    );
    const endpoint = fc.constantFrom('/v1/chat/completions', '/v1/responses', '/v1/embeddings');
    await fc.assert(
      fc.asyncProperty(fc.array(lineValue, { minLength: 1, maxLength: 4 }), endpoint, async (lines, ep) => {
        const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');
        const form = new FormData();
        form.append('purpose', 'batch');
        form.append('file', new Blob([text.length ? text : ' ']), 'fuzz.jsonl');
        const up = await fetch(`${h.url}/v1/files`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: form,
        });
        expect(up.status).toBe(200);
        const { id } = (await up.json()) as { id: string };
        const r = await h.req('POST', '/v1/batches', {
          key,
          body: { input_file_id: id, endpoint: ep, completion_window: '24h' },
        });
        expect(r.status).toBeLessThan(500);
        if (r.status === 200 && r.body.status === 'failed')
          for (const e of r.body.errors.data) {
            expect(typeof e.message).toBe('string');
            expect(e.line === null || (Number.isInteger(e.line) && e.line >= 1)).toBe(true);
          }
        if (r.status === 200 && r.body.status === 'in_progress') await untilEnded(r.body.id);
      }),
      { numRuns: 60, seed: 18 },
    );
    // What reached the upstream was always a planned request: the persona's system message first.
    expect(fake.chats.every((c) => c.body.messages?.[0]?.role === 'system')).toBe(true);
  });
});
