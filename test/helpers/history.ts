import type { Client } from '@temporalio/client';
import { pollUntil } from './poll';

export interface QuietState {
  /** Model steps (activity `runJobStep`) ever scheduled in this run. */
  stepsScheduled: number;
  /** Timers started and not yet fired or cancelled. */
  openTimers: number;
}

/**
 * Waits until the workflow is quiet: no workflow task pending, no activity running. A quiet
 * workflow with no open timer cannot do anything until something outside (an update, a signal,
 * a cancel) wakes it: that is the proof that "nothing runs between ticks", without sleeping.
 */
export async function quiet(client: Client, workflowId: string): Promise<QuietState> {
  const handle = client.workflow.getHandle(workflowId);
  await pollUntil(
    () => handle.describe(),
    (d) => !d.raw.pendingWorkflowTask && !(d.raw.pendingActivities ?? []).length,
  );
  const events = (await handle.fetchHistory()).events ?? [];
  const started = new Set<string>();
  for (const e of events) {
    if (e.timerStartedEventAttributes?.timerId) started.add(e.timerStartedEventAttributes.timerId);
    if (e.timerFiredEventAttributes?.timerId) started.delete(e.timerFiredEventAttributes.timerId);
    if (e.timerCanceledEventAttributes?.timerId) started.delete(e.timerCanceledEventAttributes.timerId);
  }
  return {
    stepsScheduled: events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runJobStep')
      .length,
    openTimers: started.size,
  };
}
