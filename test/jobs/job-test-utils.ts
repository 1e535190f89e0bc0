import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../../activities/store/db';
import type { FakeOpenAI } from '../helpers/fake-openai';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

/** First line of the last message of a recorded upstream request: the step prompt. */
export const lastUser = (r: { body: any }) => String(r.body.messages.at(-1).content).split('\n')[0];

/** How many upstream chat requests carried `prompt` as their step prompt. */
export const callsFor = (fake: FakeOpenAI, prompt: string) => fake.chats.filter((c) => lastUser(c) === prompt).length;

/** Outputs stored so far for these jobs: the steps that completed. */
export async function storedOutputs(db: Db, jobIds: string[]): Promise<string[]> {
  const rows = await db.anyFirst(sql.type(z.object({ content: z.string() }))`
    SELECT content FROM job_outputs WHERE job_id = ANY(${sql.array(jobIds, 'text')}) ORDER BY content`);
  return [...rows];
}

const HELD_OUTPUTS = ['goal one', 'goal three', 'goal two HOLD', 'pad a', 'pad b', 'pad c HOLD', 'pad d'];

/**
 * A three-step goal and a four-agent PAD session whose step "goal two HOLD" and agent "pad c HOLD"
 * the fake upstream holds (while `holding()`); resolves once both are in flight and the steps before
 * them are stored: the moment to take the worker away.
 */
export async function startHeldGoalAndPad(
  h: Harness,
  fake: FakeOpenAI,
  key: string,
  title: string,
  holding: () => boolean,
): Promise<{ goal: { id: string }; pad: { id: string } }> {
  fake.onRequest((r) => (holding() && /HOLD/.test(lastUser(r)) ? { hang: true } : { reply: `did ${lastUser(r)}` }));
  const goal = await h.req('POST', '/v1/goals', {
    key,
    body: {
      title,
      steps: [
        { title: 'one', prompt: 'goal one' },
        { title: 'two', prompt: 'goal two HOLD' },
        { title: 'three', prompt: 'goal three' },
      ],
    },
  });
  const pad = await h.req('POST', '/v1/pad/dispatch', {
    key,
    body: {
      max_concurrency: 2,
      agents: ['a', 'b', 'c HOLD', 'd'].map((n) => ({ name: n.split(' ')[0], prompt: `pad ${n}` })),
    },
  });
  expect([goal.status, pad.status]).toEqual([200, 200]);
  await fake.waitFor(() => callsFor(fake, 'goal two HOLD') === 1 && callsFor(fake, 'pad c HOLD') === 1, 30_000);
  // PAD agents run two at a time: c starts when the first of a/b finishes, so wait until both stored.
  await pollUntil(
    () => storedOutputs(h.db, [goal.body.id, pad.body.id]),
    (o) => ['did goal one', 'did pad a', 'did pad b'].every((x) => o.includes(x)),
  );
  return { goal: goal.body, pad: pad.body };
}

/** The prompts whose outputs were stored before the worker went away: never the held ones. */
export async function completedBeforeLoss(db: Db, jobIds: string[]): Promise<string[]> {
  const done = (await storedOutputs(db, jobIds)).map((c) => c.replace(/^did /, ''));
  expect(done).toEqual(expect.arrayContaining(['goal one', 'pad a', 'pad b']));
  expect(done).not.toContain('goal two HOLD');
  expect(done).not.toContain('pad c HOLD');
  return done;
}

/** Completed steps were never called again; every step's output is stored exactly once. */
export async function expectEachStepOnce(
  fake: FakeOpenAI,
  db: Db,
  jobIds: string[],
  completedBefore: string[],
): Promise<void> {
  for (const prompt of completedBefore) expect({ prompt, calls: callsFor(fake, prompt) }).toEqual({ prompt, calls: 1 });
  expect(await storedOutputs(db, jobIds)).toEqual(HELD_OUTPUTS.map((p) => `did ${p}`));
}
