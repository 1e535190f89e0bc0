import { sql } from 'slonik';
import { z } from 'zod';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { startQueueWorker, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { chatLine, createChatBatch, uploadLines } from '../helpers/batch-files';

jest.setTimeout(120_000);

let fake: FakeOpenAI;
let h: Harness;
let key: string;
// No harness worker: the test starts and stops its own.
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {} }, (up) => ({ fake, h, key } = up));

const get = (id: string) => h.req('GET', `/v1/responses/${id}`, { key });
const create = async (input: string) => {
  const r = await h.req('POST', '/v1/responses', { key, body: { model: 'mid', input, background: true } });
  expect(r.status).toBe(200);
  return r.body.id as string;
};
/** A batch polled until it completes, and the lines of one of its files (JSONL parsed). */
const completedBatch = (id: string) =>
  pollUntil(
    () => h.req('GET', `/v1/batches/${id}`, { key }),
    (r) => r.body.status === 'completed',
    60_000,
  );
const fileLines = async <T>(fileId: string) =>
  (await h.req('GET', `/v1/files/${fileId}/content`, { key })).text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T);
const events = async (id: string) =>
  (
    await h.db.any(
      sql.type(z.object({ type: z.string() }))`SELECT type FROM events WHERE stream = ${`response:${id}`} ORDER BY id`,
    )
  ).map((e) => e.type);

test('a worker stopped before the first token: the response is answered by the next worker, once', async () => {
  let release!: () => void;
  fake.setDefault({ reply: 'after the restart' });
  fake.script({ gate: new Promise<void>((r) => (release = r)), reply: 'from the stopped worker' });
  const first = await startQueueWorker(h);
  const id = await create('Wait for it');
  await pollUntil(
    async () => fake.chats.length,
    (n) => n === 1,
  );
  await first.stop();
  release();
  expect((await get(id)).body.status).toBe('queued');
  const second = await startQueueWorker(h);
  try {
    const done = await pollUntil(
      () => get(id),
      (r) => r.body.status === 'completed',
      60_000,
    );
    expect(done.body.output[0].content[0].text).toBe('after the restart');
    expect(fake.chats).toHaveLength(2);
    const types = await events(id);
    expect(types.filter((t) => t === 'response.in_progress')).toHaveLength(1);
    expect(types.at(-1)).toBe('response.completed');
  } finally {
    await second.stop();
  }
});

test('a worker stopped mid-answer: the next attempt ends the response failed rather than answer twice', async () => {
  fake.script({ reply: 'a b c d e f g h', hangAfterChunks: 2 });
  const first = await startQueueWorker(h);
  const id = await create('Half an answer');
  await pollUntil(
    () => events(id),
    (t) => t.includes('response.output_text.delta'),
  );
  await first.stop();
  const second = await startQueueWorker(h);
  try {
    const failed = await pollUntil(
      () => get(id),
      (r) => r.body.status === 'failed',
      60_000,
    );
    expect(failed.body.error).toEqual({
      code: 'server_error',
      message: expect.stringMatching(/stopped in the middle of its answer/),
    });
    expect(fake.chats).toHaveLength(1);
    const types = await events(id);
    expect(types.at(-1)).toBe('response.failed');
    expect(types.filter((t) => t === 'response.failed')).toHaveLength(1);
    expect(await h.client.workflow.getHandle(id).result()).toEqual({ status: 'failed' });
  } finally {
    await second.stop();
  }
});

test('a worker stopped mid-batch: the next worker answers what was pending; every line is in the output once', async () => {
  let holding = true;
  fake.onRequest((r) => {
    const n = Number(String(r.body.messages.at(-1).content).slice(5));
    // The first six lines answer at once; the rest wait until the first worker is gone.
    return n < 6 || !holding ? { reply: `answer ${n}` } : { hang: true };
  });
  const lines = Array.from({ length: 12 }, (_, i) => chatLine(`l${i}`, `line ${i}`, 'mid'));
  const file = await uploadLines(h, key, lines);
  const first = await startQueueWorker(h);
  const created = await createChatBatch(h, key, file);
  expect(created.status).toBe(200);
  const id = created.body.id as string;
  // Four of the held lines are in flight (SVC_BATCH_CONCURRENCY) when the worker stops.
  await fake.waitFor(() => fake.chats.length >= 10, 15_000);
  await first.stop();
  holding = false;
  const second = await startQueueWorker(h);
  try {
    const done = await completedBatch(id);
    expect(done.body.request_counts).toEqual({ total: 12, completed: 12, failed: 0 });
    const out = await fileLines<{
      custom_id: string;
      response: { body: { choices: Array<{ message: { content: string } }> } };
    }>(done.body.output_file_id);
    expect(out.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    expect(out.map((l) => l.response.body.choices[0].message.content)).toEqual(lines.map((_, i) => `answer ${i}`));
  } finally {
    await second.stop();
  }
});

test('a worker stopped during an image line’s second round: the next attempt ends the line failed, the image made once', async () => {
  // The batch's first attempt makes the line's image in its first round, then stops in its second. Before, the next
  // attempt answered the line from scratch and made the image again (images asked twice, the line completed).
  let holding = true;
  fake.onRequest((r) => {
    if (r.path.endsWith('/images/generations')) return {};
    // A line without server-run calls is asked again by the next attempt, as before.
    if (r.body.messages.at(-1).content === 'no image here') return holding ? { hang: true } : { reply: 'plain answer' };
    const afterCall = (r.body.messages as Array<{ tool_calls?: unknown }>).some((m) => m.tool_calls);
    if (!afterCall)
      return { toolCalls: [{ id: 'call_g1', name: 'image_generation', arguments: { prompt: 'A kite' } }] };
    return holding ? { hang: true } : { reply: 'A kite.' };
  });
  const images = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/images/generations'));
  const file = await uploadLines(h, key, [
    {
      custom_id: 'img',
      method: 'POST',
      url: '/v1/responses',
      body: { model: 'mid', input: 'Draw a kite.', tools: [{ type: 'image_generation' }] },
    },
    { custom_id: 'plain', method: 'POST', url: '/v1/responses', body: { model: 'mid', input: 'no image here' } },
  ]);
  const first = await startQueueWorker(h);
  const created = await h.req('POST', '/v1/batches', {
    key,
    body: { input_file_id: file, endpoint: '/v1/responses', completion_window: '24h' },
  });
  expect(created.status).toBe(200);
  const id = created.body.id as string;
  // The image made, the image line's second round and the plain line in flight.
  await fake.waitFor(() => fake.chats.length === 3, 15_000);
  expect(images()).toHaveLength(1);
  await first.stop();
  holding = false;
  const second = await startQueueWorker(h);
  try {
    const done = await completedBatch(id);
    expect(done.body.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const out = await fileLines<{ custom_id: string; response: { body: { output_text?: string; output: any[] } } }>(
      done.body.output_file_id,
    );
    expect(out.map((l) => l.custom_id)).toEqual(['plain']);
    expect(out[0].response.body.output.at(-1).content[0].text).toBe('plain answer');
    const errors = await fileLines<Record<string, unknown>>(done.body.error_file_id);
    expect(errors).toEqual([
      {
        id: expect.stringMatching(/^batch_req_/),
        custom_id: 'img',
        response: null,
        error: {
          code: 'server_error',
          message: expect.stringMatching(/stopped after making an image.*Send the request again/),
        },
      },
    ]);
    expect(images()).toHaveLength(1);
    // Three before the stop, and the plain line once more.
    expect(fake.chats).toHaveLength(4);
  } finally {
    await second.stop();
  }
});
