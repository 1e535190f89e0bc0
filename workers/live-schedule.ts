import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { Logger } from 'pino';
import { SvcKind, SvcSurface, SvcTenant } from '../workflows/search-attributes';

/** The live-state sampling schedule of a task queue (one per deployment; every replica shares it). */
export function liveScheduleId(taskQueue: string): string {
  return `svc-live-sample-${taskQueue}`;
}

/**
 * Creates the sampling schedule if it does not exist (safe to call from every worker at start):
 * Temporal, not a timer in an API process, decides when a sample is taken, so any number of
 * replicas produce exactly one sample per interval. Overlaps are skipped.
 */
export async function ensureLiveSchedule(
  client: Client,
  opts: { taskQueue: string; every?: string; log?: Logger },
): Promise<string> {
  const scheduleId = liveScheduleId(opts.taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: (opts.every ?? '1 minute') as '1 minute' }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '2 minutes' },
      action: {
        type: 'startWorkflow',
        workflowType: 'liveSampleWorkflow',
        workflowId: `live-sample-${opts.taskQueue}`,
        taskQueue: opts.taskQueue,
        args: [],
        workflowExecutionTimeout: '2 minutes',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: SvcTenant, value: 'system' },
          { key: SvcKind, value: 'live-sample' },
          { key: SvcSurface, value: 'system' },
        ]),
      },
    });
    opts.log?.info({ schedule_id: scheduleId }, 'live sampling schedule created');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return scheduleId;
}
