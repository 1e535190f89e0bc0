import { PERMANENT_STEP_ERROR } from './task-graph';

/**
 * The failure taxonomy of activities, beside the HTTP status table of `schema/errors.ts`: every
 * ApplicationFailure type an activity or workflow throws, and whether retrying can help. Retry
 * policies take their `nonRetryableErrorTypes` from here, so a type is classified in one place.
 * Pure data: the workflow bundle imports it.
 */
export const FAILURE_TYPES = {
  /** Bad step input, refused address, 4xx answer, no model provider. */
  [PERMANENT_STEP_ERROR]: 'permanent',
  /** The run no longer owns the task (cancelled, deleted, superseded). */
  StaleRunError: 'permanent',
  /** The model lane has no provider that can answer (job steps). */
  ModelUnavailable: 'permanent',
  /** The model upstream failed in a way a later attempt may not (timeouts, 5xx). */
  ModelUpstreamError: 'retryable',
  /** A learn source that was refused (not found, 4xx, blocked address). */
  SourceRejected: 'permanent',
  /** A learn source that could not be fetched now. */
  SourceUnavailable: 'retryable',
  /** The worker shut down during the activity: the next worker runs it again. */
  WorkerShutdown: 'retryable',
  /** A tick on a finished sovereign goal (update handler). */
  GoalFinished: 'permanent',
} as const satisfies Record<string, 'permanent' | 'retryable'>;

export type FailureType = keyof typeof FAILURE_TYPES;

/** The types retry policies must not retry. */
export const PERMANENT_FAILURE_TYPES: FailureType[] = (Object.keys(FAILURE_TYPES) as FailureType[]).filter(
  (t) => FAILURE_TYPES[t] === 'permanent',
);
