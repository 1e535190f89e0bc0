// Bundled only by bench/dag.ts: our workflows plus a raw DAG baseline over the no-op `echo` activity.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export * from '../workflows';

const { echo } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } });

/** The same shapes as the benchmark's tasks, with nothing around them: a chain or a fan-out of no-op activities. */
export async function rawDagWorkflow(input: { shape: 'chain' | 'fan'; n: number }): Promise<number> {
  if (input.shape === 'chain') {
    for (let i = 0; i < input.n; i++) await echo({ message: `s${i}` });
  } else {
    await Promise.all(Array.from({ length: input.n }, (_, i) => echo({ message: `s${i}` })));
    await echo({ message: 'join' });
  }
  return input.n;
}
