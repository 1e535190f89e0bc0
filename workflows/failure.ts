import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/** The message of the activity's own failure (not Temporal's wrapper), or `fallback` when it has none. */
export function activityFailureMessage(err: unknown, fallback: string): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return fallback;
}
