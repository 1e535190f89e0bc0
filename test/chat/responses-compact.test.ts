import OpenAI from 'openai';
import { sql } from 'slonik';
import { z } from 'zod';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// POST /v1/responses/compact against the real database and a fake OpenAI-compatible upstream: a conversation
// compacted into its user messages and one sealed compaction item, then continued from it.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'Noted.' } }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
type Item = { type: string; role?: string; encrypted_content?: string; content?: unknown };
/** The text of what the lane got last, message by message. */
const lastSent = () =>
  (fake.chats.at(-1)!.body.messages as Array<{ role: string; content: string }>).map((m) => `${m.role}: ${m.content}`);

async function conversation() {
  fake.script({ reply: 'Bergen in May: fjords and rain.' }, { reply: 'The Hanseatic Museum, then.' });
  const first = await client.responses.create({ model: 'mid', input: 'I am Ada. Plan a trip to Bergen.' });
  const second = await client.responses.create({
    model: 'mid',
    input: 'Add a museum.',
    previous_response_id: first.id,
  });
  return second;
}

describe('POST /v1/responses/compact', () => {
  test('a stored conversation compacts to its user messages and one sealed summary, in OpenAI’s contract', async () => {
    const second = await conversation();
    fake.script({ reply: 'SUMMARY: Ada plans Bergen in May; wants the Hanseatic Museum.' });
    const compacted = await client.responses.compact({ model: 'mid', previous_response_id: second.id });
    expect(contractErrors('CompactResource', compacted)).toEqual([]);
    expect(compacted.object).toBe('response.compaction');
    const output = compacted.output as unknown as Item[];
    expect(output.map((i) => [i.type, i.role])).toEqual([
      ['message', 'user'],
      ['message', 'user'],
      ['compaction', undefined],
    ]);
    expect(compacted.usage.total_tokens).toBeGreaterThan(0);
    // The lane was asked for a summary of the whole transcript (both answers included), not as the persona.
    const asked = fake.chats.at(-1)!.body.messages;
    expect(asked[0].content).toMatch(/context checkpoint compaction/);
    expect(asked[1].content).toContain('user: I am Ada. Plan a trip to Bergen.');
    expect(asked[1].content).toContain('assistant: The Hanseatic Museum, then.');
    // Opaque: the summary is not readable in the item.
    const sealed = output[2].encrypted_content!;
    expect(sealed).toMatch(/^svccmp1\./);
    expect(sealed).not.toContain('Hanseatic');

    // Continued from the compacted output: the lane gets the user messages and the summary, not the old answers.
    await client.responses.create({
      model: 'mid',
      input: [...(compacted.output as never[]), { role: 'user', content: 'Which museum did we pick?' }],
    });
    const sent = lastSent();
    expect(sent.some((m) => m.includes('SUMMARY: Ada plans Bergen in May'))).toBe(true);
    expect(sent.some((m) => m.includes('[Context checkpoint'))).toBe(true);
    expect(sent.some((m) => m.includes('Bergen in May: fjords and rain.'))).toBe(false);
    expect(sent.at(-1)).toBe('user: Which museum did we pick?');
  });

  test('shell, apply_patch, local_shell and computer calls and their outputs are in the transcript the lane summarizes', async () => {
    fake.script({ reply: 'SUMMARY: listed, patched, ran.' });
    const compacted = await client.responses.compact({
      model: 'mid',
      input: [
        { role: 'user', content: 'Fix the typo.' },
        { type: 'shell_call', call_id: 's1', action: { commands: ['grep -rn teh .'] } },
        {
          type: 'shell_call_output',
          call_id: 's1',
          output: [{ stdout: './a.md:3:teh', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
        },
        {
          type: 'apply_patch_call',
          call_id: 'p1',
          status: 'completed',
          operation: { type: 'update_file', path: 'a.md', diff: '@@\n-teh\n+the' },
        },
        { type: 'apply_patch_call_output', call_id: 'p1', status: 'completed', output: 'Updated a.md' },
        { type: 'local_shell_call', call_id: 'l1', action: { type: 'exec', command: ['git', 'diff'] } },
        { type: 'local_shell_call_output', id: 'l1', output: '{"stdout":"+the"}' },
        { type: 'computer_call', call_id: 'u1', action: { type: 'type', text: 'the' } },
        {
          type: 'computer_call_output',
          call_id: 'u1',
          output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,AAAA' },
        },
      ] as never,
    });
    expect(contractErrors('CompactResource', compacted)).toEqual([]);
    const transcript = fake.chats.at(-1)!.body.messages[1].content as string;
    expect(transcript).toContain('assistant called shell({"commands":["grep -rn teh ."]}) [s1]');
    expect(transcript).toContain('tool result [s1]: exit code 0\nstdout:\n./a.md:3:teh');
    expect(transcript).toContain('assistant called apply_patch({"type":"update_file","path":"a.md"');
    expect(transcript).toContain('tool result [p1]: completed: Updated a.md');
    expect(transcript).toContain('assistant called local_shell({"command":["git","diff"]}) [l1]');
    expect(transcript).toContain('tool result [l1]: {"stdout":"+the"}');
    expect(transcript).toContain('assistant called computer_use_preview({"type":"type","text":"the"}) [u1]');
    // A screenshot is not summarized from its bytes.
    expect(transcript).toContain('tool result [u1]: [screenshot]');
    expect(transcript).not.toContain('AAAA');
  });

  test('compacting again folds the earlier summary in; a stored response with a compaction item continues', async () => {
    fake.script({ reply: 'SUMMARY-1: Ada likes fjords.' });
    const one = await client.responses.compact({
      model: 'mid',
      input: [
        { role: 'user', content: 'I am Ada.' },
        { role: 'assistant', content: 'Hello Ada.' },
        { role: 'user', content: 'I like fjords.' },
      ],
    });
    fake.script({ reply: 'Fjords it is.' });
    const next = await client.responses.create({
      model: 'mid',
      input: [...(one.output as never[]), { role: 'user', content: 'And rain?' }],
    });
    fake.script({ reply: 'SUMMARY-2: fjords, rain.' });
    const two = await client.responses.compact({ model: 'mid', previous_response_id: next.id });
    expect(fake.chats.at(-1)!.body.messages[1].content).toContain('SUMMARY-1: Ada likes fjords.');
    expect((two.output as unknown as Item[]).filter((i) => i.type === 'compaction')).toHaveLength(1);
    expect((two.output as unknown as Item[]).map((i) => i.type)).toEqual([
      'message',
      'message',
      'message',
      'compaction',
    ]);

    // previous_response_id over a response whose input held a compaction item: the summary reaches the lane.
    await client.responses.create({ model: 'mid', input: 'Anything else?', previous_response_id: next.id });
    expect(lastSent().some((m) => m.includes('SUMMARY-1: Ada likes fjords.'))).toBe(true);
    const stored = await h.req('GET', `/v1/responses/${next.id}/input_items?order=asc`, { key });
    expect(stored.body.data.map((i: Item) => i.type)).toContain('compaction');
  });

  test('a changed, foreign or made-up compaction item is a 400 naming it; nothing reaches the lane', async () => {
    fake.script({ reply: 'SUMMARY: x' });
    const made = await client.responses.compact({ model: 'mid', input: 'Remember 42.' });
    const item = (made.output as unknown as Item[]).at(-1)!;
    const sealed = item.encrypted_content!;
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.at(-1);
    const otherKey = (await h.key(['runtime:chat'])).apiKey;
    const before = fake.chats.length;
    const cases: Array<[string, string, string]> = [
      [key, flipped, 'body.input.1.encrypted_content'],
      [key, sealed.slice(0, 40), 'body.input.1.encrypted_content'],
      [key, 'gAAAAABnot-ours', 'body.input.1.encrypted_content'],
      [otherKey, sealed, 'body.input.1.encrypted_content'],
    ];
    for (const [k, content, path] of cases) {
      const r = await h.req('POST', '/v1/responses', {
        key: k,
        body: {
          model: 'mid',
          input: [
            { role: 'user', content: 'hi' },
            { type: 'compaction', encrypted_content: content },
          ],
        },
      });
      expect([r.status, paths(r.body)]).toEqual([400, [path]]);
      expect(r.body.error).toMatch(/compact the conversation again/);
    }
    const conv = await h.req('POST', '/v1/conversations', {
      key,
      body: { items: [{ type: 'compaction', encrypted_content: flipped }] },
    });
    expect([conv.status, paths(conv.body)]).toEqual([400, ['body.items.0.encrypted_content']]);
    const compactAgain = await h.req('POST', '/v1/responses/compact', {
      key,
      body: { model: 'mid', input: [{ type: 'compaction', encrypted_content: flipped }] },
    });
    expect([compactAgain.status, paths(compactAgain.body)]).toEqual([400, ['body.input.0.encrypted_content']]);
    expect(fake.chats.length).toBe(before);

    // The right tenant's item is taken, in a conversation too; one key serves every request.
    const ok = await h.req('POST', '/v1/conversations', { key, body: { items: [item] } });
    expect(ok.status).toBe(200);
    const keys = await h.db.oneFirst(
      sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM service_keys WHERE name = 'compaction'`,
    );
    expect(keys).toBe(1);
  });

  test('bad requests: 400 naming the field, unknown lane 404, unknown previous response 404, no scope 403', async () => {
    const compact = (body: unknown, k = key) => h.req('POST', '/v1/responses/compact', { key: k, body });
    const before = fake.chats.length;
    const bad: Array<[unknown, number, string[]]> = [
      [{ input: 'x' }, 400, ['body.model']],
      [{ model: 'mid' }, 400, ['body.input']],
      [{ model: 'mid', input: [] }, 400, ['body.input']],
      [{ model: 'mid', input: [{ type: 'compaction' }] }, 400, ['body.input.0.encrypted_content']],
      [{ model: 'mid', previous_response_id: 'resp_unknown1' }, 404, ['body.previous_response_id']],
    ];
    for (const [body, status, p] of bad) {
      const r = await compact(body);
      expect([JSON.stringify(body), r.status, paths(r.body)]).toEqual([JSON.stringify(body), status, p]);
    }
    const unknown = await compact({ model: 'gpt-5.1-codex-max', input: 'x' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'model_not_found']);
    fake.script({ reply: '   ' });
    const empty = await compact({ model: 'mid', input: 'x' });
    expect(empty.status).toBe(502);
    const modelsOnly = (await h.key(['runtime:models'])).apiKey;
    expect((await compact({ model: 'mid', input: 'x' }, modelsOnly)).status).toBe(403);
    expect(fake.chats.length).toBe(before + 1);
  });
});
