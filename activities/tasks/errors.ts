import { ApplicationFailure } from '@temporalio/common';
import { AppError } from '../../schema/errors';
import { PERMANENT_STEP_ERROR } from '../../schema/tasks';

/** A step failure that retrying cannot fix (bad input, refused address, 4xx answer, no model provider). */
export class StepPermanentError extends Error {
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = PERMANENT_STEP_ERROR;
  }
}

/**
 * The retryable failure for an activity interrupted because its worker is shutting down (the
 * cancellation reason Temporal gives is WORKER_SHUTDOWN), or null for any other interruption.
 * A worker going down is not the step's fault: the next worker runs the step again.
 */
export function workerShutdownFailure(signal: AbortSignal): ApplicationFailure | null {
  if (!signal.aborted || (signal.reason as Error | undefined)?.message !== 'WORKER_SHUTDOWN') return null;
  return ApplicationFailure.retryable('The worker shut down during this step.', 'WorkerShutdown');
}

/** Model-layer errors that retrying cannot fix. */
const PERMANENT_APP_CODES = new Set([
  'model_not_found',
  'service_unavailable',
  'invalid_request',
  'not_found',
  'forbidden',
  'unauthorized',
]);

/**
 * The failure Temporal sees: permanent errors become non-retryable ApplicationFailures of one
 * type (PERMANENT_STEP_ERROR, listed in the workflow's retry policy); everything else retries.
 */
export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof StepPermanentError || (err instanceof AppError && PERMANENT_APP_CODES.has(err.code))) {
    return ApplicationFailure.create({
      message: (err as Error).message,
      type: PERMANENT_STEP_ERROR,
      nonRetryable: true,
    });
  }
  return err;
}
