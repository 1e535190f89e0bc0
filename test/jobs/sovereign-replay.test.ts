import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../helpers/harness';

/**
 * Runs already in flight must replay with the current workflow code. The histories were recorded with
 * test/jobs/record-sovereign-history.ts (a goal of 4 steps: one tick, two concurrent ticks,
 * a failing tick) from the code of two commits:
 * - ec3cc48, before `patched('snapshot-in-step')`: every tick saves the row with a local activity;
 * - 69bde23, with the patch, before the tick's answer carried the saved step (`TickResult.saved`).
 */
function load(name: string) {
  const json = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', name), 'utf8'));
  return temporal.api.history.v1.History.fromObject(json);
}

type History = ReturnType<typeof load>;
const markers = (h: History, name: string) =>
  (h.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === name).length;
const replay = (h: History) => Worker.runReplayHistory({ workflowBundle: { codePath: testEnv().bundlePath } }, h);

test("a run recorded before patched('snapshot-in-step') (a local activity after each tick's step) replays", async () => {
  const h = load('sovereign-before-snapshot-in-step.history.json');
  // What makes it the old path: no patch marker, the start's snapshot and one per tick (4 ticks).
  expect(markers(h, 'core_patch')).toBe(0);
  expect(markers(h, 'core_local_activity')).toBe(5);
  await expect(replay(h)).resolves.toBeUndefined();
});

test("a run recorded with patched('snapshot-in-step') (the step saves the row) replays", async () => {
  const h = load('sovereign-snapshot-in-step.history.json');
  // The patch marker; local activities for the start's snapshot and the failed step only.
  expect(markers(h, 'core_patch')).toBe(1);
  expect(markers(h, 'core_local_activity')).toBe(2);
  await expect(replay(h)).resolves.toBeUndefined();
});
