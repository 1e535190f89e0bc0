import { CancellationScope, isCancellation, setHandler } from '@temporalio/workflow';
import { mapBounded } from './bounded';
import { padStateQuery } from './job-defs';
import { failureMessage, modelActs, storeActs } from './job-steps';
import type { PadInput } from './job-types';

/**
 * Parallel agent dispatch: every agent is a bounded model call with its own retries, at most
 * `maxConcurrency` at once. A failed agent is reported on its row; it does not fail the session.
 */
export async function padWorkflow(input: PadInput): Promise<{ completed: number; failed: number }> {
  const running = new Set<number>();
  const done: number[] = [];
  let failed = 0;
  setHandler(padStateQuery, () => ({ running: [...running], done: [...done] }));
  const base = { tenantId: input.tenantId, sessionId: input.sessionId };
  try {
    await mapBounded(input.agents, input.maxConcurrency, async (a) => {
      running.add(a.index);
      try {
        const out = await modelActs.runPadAgent({
          ...base,
          index: a.index,
          prompt: a.prompt,
          lane: a.lane,
          surface: a.surface,
        });
        await storeActs.recordPadAgent({
          ...base,
          index: a.index,
          status: 'completed',
          outputId: out.outputId,
          durationMs: out.durationMs,
        });
      } catch (err) {
        if (isCancellation(err)) throw err;
        failed++;
        await storeActs.recordPadAgent({ ...base, index: a.index, status: 'failed', error: failureMessage(err) });
      } finally {
        running.delete(a.index);
        done.push(a.index);
      }
    });
    await storeActs.finishPad({ ...base, status: 'completed' });
    return { completed: input.agents.length - failed, failed };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => storeActs.finishPad({ ...base, status: 'cancelled' }));
    }
    throw err;
  }
}
