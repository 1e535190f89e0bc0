import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { Logger } from 'pino';
import { SvcKind, SvcSurface, SvcTenant } from '../workflows/search-attributes';

/** The live-state sampling schedule of a task queue (one per deployment; every replica shares it). */
export function liveScheduleId(taskQueue: string): string {
  return `svc-live-sample-${taskQueue}`;
}

/** The retention sweep's schedule of a task queue (expired responses and files removed, hourly). */
export function retentionScheduleId(taskQueue: string): string {
  return `svc-retention-${taskQueue}`;
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
  return ensureSchedule(client, {
    ...opts,
    scheduleId: liveScheduleId(opts.taskQueue),
    workflowType: 'liveSampleWorkflow',
    workflowId: `live-sample-${opts.taskQueue}`,
    kind: 'live-sample',
    every: opts.every ?? '1 minute',
    timeout: '2 minutes',
  });
}

/** Creates the hourly retention sweep's schedule if it does not exist (as `ensureLiveSchedule`). */
export async function ensureRetentionSchedule(
  client: Client,
  opts: { taskQueue: string; every?: string; log?: Logger },
): Promise<string> {
  return ensureSchedule(client, {
    ...opts,
    scheduleId: retentionScheduleId(opts.taskQueue),
    workflowType: 'retentionSweepWorkflow',
    workflowId: `retention-sweep-${opts.taskQueue}`,
    kind: 'retention',
    every: opts.every ?? '1 hour',
    timeout: '15 minutes',
  });
}

/** One of our system schedules, created once per deployment; overlaps skipped, a short catch-up window. */
async function ensureSchedule(
  client: Client,
  o: {
    scheduleId: string;
    workflowType: string;
    workflowId: string;
    kind: string;
    every: string;
    timeout: string;
    taskQueue: string;
    log?: Logger;
  },
): Promise<string> {
  try {
    await client.schedule.create({
      scheduleId: o.scheduleId,
      spec: { intervals: [{ every: o.every as '1 minute' }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '2 minutes' },
      action: {
        type: 'startWorkflow',
        workflowType: o.workflowType,
        workflowId: o.workflowId,
        taskQueue: o.taskQueue,
        args: [],
        workflowExecutionTimeout: o.timeout as '2 minutes',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: SvcTenant, value: 'system' },
          { key: SvcKind, value: o.kind },
          { key: SvcSurface, value: 'system' },
        ]),
      },
    });
    o.log?.info({ schedule_id: o.scheduleId }, `${o.kind} schedule created`);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return o.scheduleId;
}
