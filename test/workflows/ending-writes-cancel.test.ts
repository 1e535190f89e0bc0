import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { pollUntil } from '../helpers/poll';
import { gate, mockedWorkflows } from './mocked-worker';

// The ending writes of background responses and batches under a workflow cancel, with mocked activities on the real
// dev server: a cancel never stops the write that ends the job, and what is reported is what the row says.
jest.setTimeout(120_000);
const { run } = mockedWorkflows();

/** Fails the first attempt with a retry 3 s later: long enough for the test to cancel while it waits. */
const failOnceThenRetry = (message: string) =>
  ApplicationFailure.create({ message, type: 'DbDown', nextRetryDelay: '3 seconds' });

/** Whether `activity` waits for its next attempt (scheduled, not started, past its first attempt). */
async function inRetryBackoff(h: WorkflowHandle, activity: string): Promise<boolean> {
  const d = await h.describe();
  return (d.raw.pendingActivities ?? []).some(
    // state 1 = PENDING_ACTIVITY_STATE_SCHEDULED
    (a) => a.activityType?.name === activity && (a.attempt ?? 0) >= 2 && a.state === 1,
  );
}

describe('batch', () => {
  test('the give-up finish waiting for its retry when a cancel arrives: it still runs, and the batch ends', async () => {
    const finished: Array<{ outcome: string; failPending?: string }> = [];
    const webhooks: string[] = [];
    let tries = 0;
    const r = await run(
      'batchWorkflow',
      [{ tenantId: 't', batchId: 'batch_1' }],
      {
        runBatchRequests: async () => {
          throw ApplicationFailure.nonRetryable('db down', 'DbDown');
        },
        markBatchCancelling: async () => undefined,
        finishBatchRun: async (i: { outcome: string; failPending?: string }) => {
          if (++tries === 1) throw failOnceThenRetry('db still down');
          finished.push({ outcome: i.outcome, failPending: i.failPending });
        },
        webhookTargets: async (i: { type: string }) => {
          webhooks.push(i.type);
          return [];
        },
      },
      async (h) => {
        await pollUntil(
          () => inRetryBackoff(h, 'finishBatchRun'),
          (v) => v,
        );
        await h.cancel();
      },
    );
    expect(r.error).toBeUndefined();
    expect(finished).toEqual([{ outcome: 'completed', failPending: "The batch's run gave up: db down" }]);
    expect(r.result).toEqual({ status: 'completed' });
    expect(webhooks).toEqual(['batch.completed']);
  });

  test('a run that answers its cancel with another failure (the worker stopping) ends the batch cancelled', async () => {
    const finished: Array<{ outcome: string; failPending?: string }> = [];
    const started = gate();
    const r = await run(
      'batchWorkflow',
      [{ tenantId: 't', batchId: 'batch_2' }],
      {
        runBatchRequests: async () => {
          const ctx = Context.current();
          const beat = setInterval(() => ctx.heartbeat(), 100);
          started.open();
          try {
            await ctx.cancelled;
          } catch {
            // What activities/batches does when the worker stops: not a CancelledFailure.
            throw ApplicationFailure.retryable('the worker is stopping', 'WorkerShutdown');
          } finally {
            clearInterval(beat);
          }
          return { cancelled: false, expired: false };
        },
        markBatchCancelling: async () => undefined,
        finishBatchRun: async (i: { outcome: string; failPending?: string }) => {
          finished.push({ outcome: i.outcome, failPending: i.failPending });
        },
        webhookTargets: async () => [],
      },
      async (h) => {
        await started.promise;
        await h.cancel();
      },
    );
    // Cancelled, keeping what was answered: no pending request is failed as if the run had given up.
    expect(finished).toEqual([{ outcome: 'cancelled', failPending: undefined }]);
    expect(r.result).toEqual({ status: 'cancelled' });
  });
});

describe('background response', () => {
  test('the give-up end waiting for its retry when a cancel arrives: it still runs, and the response ends failed', async () => {
    const ended: string[] = [];
    const webhooks: string[] = [];
    let tries = 0;
    const r = await run(
      'backgroundResponseWorkflow',
      [{ tenantId: 't', responseId: 'resp_1' }],
      {
        runBackgroundResponse: async () => {
          throw ApplicationFailure.nonRetryable('upstream answered 502', 'upstream_error');
        },
        endBackgroundResponse: async (i: { status: string }) => {
          if (++tries === 1) throw failOnceThenRetry('db down');
          ended.push(i.status);
          return i.status;
        },
        webhookTargets: async (i: { type: string }) => {
          webhooks.push(i.type);
          return [];
        },
      },
      async (h) => {
        await pollUntil(
          () => inRetryBackoff(h, 'endBackgroundResponse'),
          (v) => v,
        );
        await h.cancel();
      },
    );
    expect(r.error).toBeUndefined();
    expect(ended).toEqual(['failed']);
    expect(r.result).toEqual({ status: 'failed' });
    expect(webhooks).toEqual(['response.failed']);
  });

  test('a cancel that loses to the run’s last write: the result and the webhook are the stored completed', async () => {
    // The row as the activities see it: the run's last write ends it completed; a later end finds it ended (endRun).
    let stored = 'in_progress';
    const ended: string[] = [];
    const delivered: string[] = [];
    const release = gate();
    const r = await run(
      'backgroundResponseWorkflow',
      [{ tenantId: 't', responseId: 'resp_2' }],
      {
        runBackgroundResponse: async () => {
          stored = 'completed';
          // Still closing (the stream's tap, MCP servers): its completion reaches Temporal after the cancel.
          await release.promise;
          return { status: 'completed' };
        },
        endBackgroundResponse: async (i: { status: string }) => {
          ended.push(i.status);
          if (stored === 'in_progress') stored = i.status;
          return stored;
        },
        webhookTargets: async () => ['whep_1'],
        deliverWebhook: async (i: { event: { type: string } }) => {
          delivered.push(i.event.type);
          return 'ok';
        },
      },
      async (h) => {
        await pollUntil(
          async () => stored,
          (s) => s === 'completed',
        );
        await h.cancel();
        // The workflow has taken the cancel (its activity's result is dropped) before the activity returns.
        await pollUntil(
          async () => ended.length,
          (n) => n === 1,
        );
        release.open();
        await pollUntil(
          async () => delivered.length,
          (n) => n === 1,
        );
      },
    );
    expect(ended).toEqual(['cancelled']);
    expect(r.result).toEqual({ status: 'completed' });
    expect(delivered).toEqual(['response.completed']);
  });
});

describe('email', () => {
  test('the gave-up write waiting for its retry when a cancel arrives: it still runs, and the email ends failed', async () => {
    const gaveUp: string[] = [];
    let tries = 0;
    const r = await run(
      'emailWorkflow',
      [{ tenantId: 't', emailId: 'email_1' }],
      {
        sendEmail: async () => {
          throw ApplicationFailure.nonRetryable('no SMTP server is configured', 'SmtpNotConfigured');
        },
        emailGaveUp: async (i: { error: string }) => {
          if (++tries === 1) throw failOnceThenRetry('db down');
          gaveUp.push(i.error);
        },
      },
      async (h) => {
        await pollUntil(
          () => inRetryBackoff(h, 'emailGaveUp'),
          (v) => v,
        );
        await h.cancel();
      },
    );
    expect(r.error).toBeUndefined();
    expect(gaveUp).toEqual(['Gave up after repeated transient failures: no SMTP server is configured']);
    expect(r.result).toEqual({ status: 'failed' });
  });
});
