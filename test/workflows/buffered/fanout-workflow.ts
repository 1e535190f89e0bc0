import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

const { branch } = proxyActivities<{ branch(i: number): Promise<number> }>({ startToCloseTimeout: '60 s' });
const { hold } = proxyLocalActivities<{ hold(): Promise<void> }>({ startToCloseTimeout: '60 s' });

/**
 * Fans out `n` activities; once the first has completed, keeps that workflow task open (a local activity runs
 * inside it) while the test lets the other n - 1 complete, so the server holds their events until the task ends.
 */
export async function bufferedFanout(n: number): Promise<number> {
  const all = Array.from({ length: n }, (_, i) => branch(i));
  await Promise.race(all);
  await hold();
  return (await Promise.all(all)).length;
}
