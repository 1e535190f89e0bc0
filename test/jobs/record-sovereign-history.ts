/**
 * Records the history of a sovereign goal run for the replay tests (test/jobs/sovereign-replay.test.ts,
 * fixtures in test/jobs/fixtures/).
 * Not a test of the suite: to record with the code of some commit, copy this file into a checkout of that
 * commit as `test/jobs/record.test.ts` and run there
 *   RECORD_HISTORY_TO=/abs/path.json npm test -- test/jobs/record.test.ts
 * The run: a goal of 4 steps, one tick, two concurrent ticks, then a tick whose step fails (upstream 400),
 * which ends the workflow.
 */
import { writeFileSync } from 'node:fs';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream({ worker: true, scopes: ['runtime:chat'] }, (up) => ({ fake, h, key } = up));

test('record a sovereign goal history', async () => {
  fake.onRequest((r) => ({ reply: `out: ${r.body.messages.at(-1).content.split('\n')[0]}` }));
  const steps = Array.from({ length: 4 }, (_, i) => ({ title: `S${i + 1}`, prompt: `Do step ${i + 1}.` }));
  const id = (await h.req('POST', '/v1/sovereign/goals', { key, body: { title: 'Recorded', steps } })).body.id;
  expect((await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key })).status).toBe(200);
  const two = await Promise.all([1, 2].map(() => h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key })));
  expect(two.map((r) => r.status)).toEqual([200, 200]);
  fake.onRequest(() => ({ status: 400 }));
  const failed = await h.req('POST', `/v1/sovereign/goals/${id}/tick`, { key });
  expect(failed.body.status).toBe('failed');
  const handle = h.client.workflow.getHandle(`sovereign-${id}`);
  await handle.result();
  // protobufjs' JSON form (int64 as strings, enums by name); the replay test reads it back with History.fromObject.
  writeFileSync(process.env.RECORD_HISTORY_TO!, JSON.stringify(await handle.fetchHistory(), null, 1));
});
