import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { NO_SEARCH_NOTE } from '../../activities/tasks/research-action';
import { runTask } from './run-task';

jest.setTimeout(120_000);

let h: Harness;
let fake: FakeOpenAI;
let key: string;
withFakeUpstream(
  { worker: true, scopes: ['runtime:records'], env: { OPENAI_API_KEY: 'sk-upstream' } },
  (up) => ({ fake, h, key } = up),
);

const run = (body: unknown) => runTask(h, key, body);

test('model actions call the lanes through the provider layer and chain their results', async () => {
  fake.reset();
  fake.onRequest((req) => {
    const system = String(req.body?.messages?.[0]?.content ?? '');
    if (system.startsWith('You research')) return { reply: 'Findings: tides follow the moon.' };
    if (system.startsWith('Summarize')) return { reply: 'Short: moon drives tides.' };
    if (system.startsWith('Compare')) return { reply: 'Both mention the moon.' };
    if (system.startsWith('Write a clear draft')) return { reply: 'Dear reader, the moon...' };
    return { reply: 'Generated text.' };
  });
  const done = await run({
    title: 'models',
    steps: [
      { id: 'r', title: 'research', action: 'research', args: { topic: 'Why are there tides?' } },
      { id: 's', title: 'summarize', action: 'summarize', args: { content: '{{steps.r.result}}' }, depends_on: ['r'] },
      { id: 'c', title: 'compare', action: 'compare', depends_on: ['r', 's'] },
      { id: 'd', title: 'draft', action: 'draft', args: { prompt: 'Write a note for kids.' }, depends_on: ['s'] },
      { id: 'g', title: 'generate', action: 'generate', args: { prompt: 'A title', lane: 'micro', max_tokens: '20' } },
    ],
  });
  expect(done.status).toBe('completed');
  const s = Object.fromEntries(done.steps.map((x: any) => [x.id, x]));
  // No search provider configured: today's model-only research, with a note saying so.
  expect(s.r.result).toBe(`${NO_SEARCH_NOTE}\n\nFindings: tides follow the moon.`);
  expect(s.s.result).toBe('Short: moon drives tides.');
  expect(s.c.result).toBe('Both mention the moon.');
  expect(s.d.result).toBe('Dear reader, the moon...');
  expect(s.g.result).toBe('Generated text.');
  expect(fake.chats).toHaveLength(5);
  const userOf = (prefix: string) =>
    fake.chats.find((c) => String(c.body.messages[0].content).startsWith(prefix))!.body.messages[1].content as string;
  expect(userOf('You research')).toContain('Why are there tides?');
  // The summary got the research result through {{steps.r.result}} (and as material).
  expect(userOf('Summarize')).toContain('Findings: tides follow the moon.');
  // compare has no args: its material is both dependencies' results.
  expect(userOf('Compare')).toContain(`[r]\n${NO_SEARCH_NOTE}\n\nFindings: tides follow the moon.`);
  expect(userOf('Compare')).toContain('[s]\nShort: moon drives tides.');
  const gen = fake.chats.find((c) => c.body.messages[0].content === 'Do what the prompt asks.')!;
  expect(gen.body.max_tokens).toBe(20);
  expect(gen.headers.authorization).toBe('Bearer sk-upstream');
});

test('an upstream 500 is retried; a lasting failure fails the step with a useful message', async () => {
  fake.reset();
  fake.script({ status: 500 }, { reply: 'recovered' });
  const ok = await run({ title: 'retry', steps: [{ id: 'g', title: 'g', action: 'generate', args: { prompt: 'x' } }] });
  expect(ok.status).toBe('completed');
  expect(ok.steps[0]).toMatchObject({ result: 'recovered', attempts: 2 });

  fake.reset();
  fake.setDefault({ status: 500 });
  const bad = await run({
    title: 'fails',
    steps: [{ id: 'g', title: 'g', action: 'generate', args: { prompt: 'x' } }],
  });
  fake.setDefault({});
  expect(bad.status).toBe('failed');
  expect(bad.steps[0].status).toBe('failed');
  expect(bad.steps[0].attempts).toBe(3);
  expect(bad.steps[0].error).toMatch(/model provider .* failed \(HTTP 500\)/);
});

test('a model step without input fails at once (permanent), without calling the model', async () => {
  fake.reset();
  const bad = await run({ title: 'empty', steps: [{ id: 's', title: 's', action: 'summarize' }] });
  expect(bad.status).toBe('failed');
  expect(bad.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
  expect(bad.steps[0].error).toMatch(/needs args.content/);
  expect(fake.chats).toHaveLength(0);
});
