import { ApplicationFailure } from '@temporalio/common';
import { StepPermanentError, toActivityFailure, workerShutdownFailure } from '../../activities/tasks/errors';
import { AppError } from '../../schema/errors';
import { FAILURE_TYPES, PERMANENT_FAILURE_TYPES, type FailureType } from '../../schema/failure-types';

/** A failure's retryability agrees with the one table. */
function expectClassified(f: unknown): void {
  expect(f).toBeInstanceOf(ApplicationFailure);
  const a = f as ApplicationFailure;
  expect(Object.keys(FAILURE_TYPES)).toContain(a.type);
  expect(a.nonRetryable).toBe(FAILURE_TYPES[a.type as FailureType] === 'permanent');
}

test('the failures activities throw are classified by the one table', () => {
  expectClassified(toActivityFailure(new StepPermanentError('bad input')));
  expectClassified(toActivityFailure(new AppError('invalid_request', 'bad')));
  const ac = new AbortController();
  ac.abort(new Error('WORKER_SHUTDOWN'));
  expectClassified(workerShutdownFailure(ac.signal));
  // A transient error is left for Temporal to retry.
  const transient = new Error('connection reset');
  expect(toActivityFailure(transient)).toBe(transient);
});

test('retry policies get exactly the permanent types', () => {
  expect([...PERMANENT_FAILURE_TYPES].sort()).toEqual([
    'GoalFinished',
    'ModelUnavailable',
    'SourceRejected',
    'StaleRunError',
    'StepPermanentError',
  ]);
  expect(PERMANENT_FAILURE_TYPES).not.toContain('WorkerShutdown');
});
