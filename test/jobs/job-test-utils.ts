import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../../activities/store/db';
import type { FakeOpenAI } from '../helpers/fake-openai';

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
