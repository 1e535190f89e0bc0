import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { withFirstWriteFailing } from '../helpers/db-faults';
import type { Harness } from '../helpers/harness';

// Issue 10 item 14: the progress events the job activities write are served (SSE, resumable).

let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream(
  { worker: true, scopes: ['runtime:chat'], resetEach: { reply: 'agent answer' } },
  (up) => ({ fake, h, key } = up),
);

/** `{ id, event, data }` of each SSE message. */
function messages(text: string): Array<{ id: number; event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      return { id: Number(field('id')), event: field('event') ?? 'message', data: JSON.parse(field('data') ?? 'null') };
    });
}

test('a PAD session streams agent and session states to the end; Last-Event-ID resumes after an event', async () => {
  const created = await h.req('POST', '/v1/pad/dispatch', {
    key,
    body: {
      agents: [
        { name: 'a', prompt: 'one' },
        { name: 'b', prompt: 'two' },
      ],
    },
  });
  expect(created.status).toBe(200);
  const id = created.body.id as string;
  // The stream stays open until the session reaches a terminal state, so this read waits for the run.
  const all = await h.req('GET', `/v1/pad/sessions/${id}/events`, { key });
  expect(all.status).toBe(200);
  expect(all.headers.get('content-type')).toMatch(/text\/event-stream/);
  const events = messages(all.text);
  expect(events.at(-1)).toMatchObject({ event: 'session.state', data: { status: 'completed' } });
  expect(
    events
      .filter((e) => e.event === 'agent.state' && e.data.status === 'completed')
      .map((e) => e.data.index)
      .sort(),
  ).toEqual([0, 1]);
  expect(fake.chats.length).toBeGreaterThanOrEqual(2);
  const resumed = messages(
    (await h.req('GET', `/v1/pad/sessions/${id}/events`, { key, headers: { 'Last-Event-ID': String(events[0].id) } }))
      .text,
  );
  expect(resumed.map((e) => e.id)).toEqual(events.slice(1).map((e) => e.id));
});

test("another tenant's job is 404; a malformed Last-Event-ID is 400", async () => {
  const created = await h.req('POST', '/v1/swarm/run', {
    key,
    body: { operation: 'map', params: { prompt: 'Echo {{item}}', items: ['x'] } },
  });
  expect(created.status).toBe(200);
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', `/v1/swarm/runs/${created.body.run_id}/events`, { key: other })).status).toBe(404);
  expect((await h.req('GET', '/v1/goals/goal_missing/events', { key })).status).toBe(404);
  const bad = await h.req('GET', `/v1/swarm/runs/${created.body.run_id}/events`, {
    key,
    headers: { 'Last-Event-ID': 'x' },
  });
  expect([bad.status, bad.body.details[0].path]).toEqual([400, 'headers.last-event-id']);
  const run = messages((await h.req('GET', `/v1/swarm/runs/${created.body.run_id}/events`, { key })).text);
  expect(run.at(-1)).toMatchObject({ event: 'run.state', data: { status: 'completed' } });
});

test('a step whose step.completed event fails once is retried: every step’s event is on the stream once', async () => {
  // A database fault: the first step.completed written to a swarm stream fails after the step's output is stored.
  // The retry finds the output and writes the missing event (it returned the output and wrote nothing before).
  const { fired } = await withFirstWriteFailing(
    h.db,
    {
      table: 'events',
      op: 'INSERT',
      when: "NEW.type = $kind AND NEW.stream LIKE 'swarm:%'",
      kinds: ['step.completed'],
    },
    async () => {
      const created = await h.req('POST', '/v1/swarm/run', {
        key,
        body: { operation: 'map', params: { prompt: 'Echo {{item}}', items: ['x', 'y', 'z'] } },
      });
      expect(created.status).toBe(200);
      const run = messages((await h.req('GET', `/v1/swarm/runs/${created.body.run_id}/events`, { key })).text);
      expect(run.at(-1)).toMatchObject({ event: 'run.state', data: { status: 'completed' } });
      const steps = run.filter((e) => e.event === 'step.completed').map((e) => e.data.step as string);
      expect(steps).toHaveLength(3);
      expect(new Set(steps).size).toBe(3);
    },
  );
  expect(fired).toEqual(['step.completed']);
});
