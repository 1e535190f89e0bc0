import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../helpers/harness';

// Replay safety of the uncancellable ending writes (patches `batch-finish-uncancellable`, `batch-give-up-uncancellable`,
// `response-give-up-uncancellable`, `email-gave-up-uncancellable`): histories recorded with mocked activities by the
// code before them (84b663d), each with a cancel arriving during an ending write, replay on today's code. Without the
// patches, all but the last fail with a nondeterminism error (checked by replacing each patched() with true). Recorded
// once on the dev server with a workflow bundle of 84b663d's workflows/ and the mocked activities of
// ending-writes-cancel.test.ts (the first kept open: its 'cancelled' finish failing with a retry an hour later).
jest.setTimeout(120_000);

const fixtures = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'ending-writes-histories-v1.json'), 'utf8'),
) as Record<string, string>;
const decode = (b64: string) => temporal.api.history.v1.History.decode(Buffer.from(b64, 'base64'));
const replay = (h: temporal.api.history.v1.IHistory) =>
  Worker.runReplayHistory({ workflowBundle: { codePath: testEnv().bundlePath } }, h);
const events = (h: temporal.api.history.v1.IHistory) => h.events ?? [];
const cancelsRequested = (h: temporal.api.history.v1.IHistory) =>
  events(h).filter((e) => e.activityTaskCancelRequestedEventAttributes).length;
const last = (h: temporal.api.history.v1.IHistory) => events(h).at(-1)!;

test('a batch whose success-path finish was cancelled, its cancelled finish still retrying (open), replays', async () => {
  const h = decode(fixtures.batchFinishCancelledOpen);
  expect(cancelsRequested(h)).toBe(1);
  expect(
    events(h).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'finishBatchRun'),
  ).toHaveLength(2);
  await expect(replay(h)).resolves.toBeUndefined();
});

test.each(['batchGiveUpCancelled', 'batchShutdownOnCancel', 'responseGiveUpCancelled', 'emailGaveUpCancelled'])(
  '%s (closed as cancelled during its ending write) replays',
  async (name) => {
    const h = decode(fixtures[name]);
    expect(last(h).workflowExecutionCanceledEventAttributes).toBeTruthy();
    // The ending write's cancel (or, for a run that answered its cancel with WorkerShutdown, its run's).
    expect(cancelsRequested(h)).toBe(1);
    await expect(replay(h)).resolves.toBeUndefined();
  },
);

test('a response whose cancel lost to its last write (closed, reported cancelled then) replays', async () => {
  const h = decode(fixtures.responseCancelLost);
  expect(last(h).workflowExecutionCompletedEventAttributes).toBeTruthy();
  await expect(replay(h)).resolves.toBeUndefined();
});
