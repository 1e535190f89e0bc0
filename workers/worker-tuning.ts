import type { WorkerOptions } from '@temporalio/worker';

/**
 * The worker settings that tune its slots, pollers and workflow cache (nothing that changes what it
 * runs): what `createRuntimeWorker`'s `tuning` accepts. A module of its own, free of the worker SDK at
 * run time, so the benches can check a setting's name without loading it.
 */
export const WORKER_TUNING_KEYS = [
  'maxConcurrentActivityTaskExecutions',
  'maxConcurrentLocalActivityExecutions',
  'maxConcurrentWorkflowTaskExecutions',
  'maxConcurrentActivityTaskPolls',
  'maxConcurrentWorkflowTaskPolls',
  'workflowTaskPollerBehavior',
  'activityTaskPollerBehavior',
  'nonStickyToStickyPollRatio',
  'maxCachedWorkflows',
  'workflowThreadPoolSize',
] as const;

export type WorkerTuning = Pick<WorkerOptions, (typeof WORKER_TUNING_KEYS)[number]>;
