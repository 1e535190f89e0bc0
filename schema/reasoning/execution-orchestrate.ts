import { z } from 'zod';
import { MAX_ITEMS, capField, idText, integrationHint, shortText, stringList, surfaceField } from './common';

/** POST /v1/execution/orchestrate: plan waves of parallel execution for dependent jobs (plans only). */
export const orchestrateJob = z.object({
  id: idText,
  title: shortText.optional(),
  needs: stringList().optional().describe('Ids of jobs that must finish first.'),
  duration_minutes: z.number().min(0).max(1e6).optional().describe('Expected run time (default 1).'),
  resources: z
    .array(z.object({ name: shortText.min(1), amount: z.number().min(0).max(1e9) }))
    .max(50)
    .optional()
    .describe('Resource demand while the job runs, e.g. [{ name: "gpu", amount: 1 }].'),
  retries: z.number().int().min(0).max(20).optional(),
  idempotent: z
    .boolean()
    .optional()
    .describe('Default true; non-idempotent jobs are not retried unless retries is set.'),
  checkpoint: z.boolean().optional().describe('Force a checkpoint after this job.'),
  priority: z.number().min(-1e6).max(1e6).optional(),
});

export const executionOrchestrateRequest = z.object({
  surface: surfaceField,
  intent: shortText.optional(),
  jobs: z.array(orchestrateJob).min(1).max(MAX_ITEMS).describe('Jobs and their dependencies.'),
  resources: z
    .array(z.object({ name: shortText.min(1), capacity: z.number().min(0).max(1e9) }))
    .max(200)
    .optional(),
  preferences: z
    .object({
      max_concurrency: capField(1000).describe('Jobs per wave (default 4).'),
      max_waves: capField(MAX_ITEMS).describe(
        'Cap on planned waves (default 500); later jobs are reported unscheduled.',
      ),
      default_retries: z.number().int().min(0).max(20).optional(),
      checkpoint_every_minutes: z.number().min(1).max(1e6).optional(),
    })
    .optional(),
});

export const executionOrchestrateResponse = z.object({
  surface: z.string().nullable(),
  waves: z.array(
    z.object({
      wave: z.number().int(),
      start_minute: z.number(),
      end_minute: z.number(),
      job_ids: z.array(z.string()),
      resource_use: z.array(z.object({ name: z.string(), used: z.number(), capacity: z.number() })),
    }),
  ),
  schedule: z.array(
    z.object({ job_id: z.string(), wave: z.number().int(), start_minute: z.number(), end_minute: z.number() }),
  ),
  critical_path: z.object({ job_ids: z.array(z.string()), total_minutes: z.number() }),
  makespan_minutes: z.number().describe('End of the last planned wave (waves run as barriers).'),
  lower_bound_minutes: z.number().describe('max(critical path, total work / concurrency).'),
  blocked: z.array(
    z.object({
      job_id: z.string(),
      reason: z.enum(['missing_dependency', 'dependency_cycle', 'resource_exceeds_capacity', 'upstream_blocked']),
      refs: z.array(z.string()),
    }),
  ),
  cycles: z.array(z.array(z.string())),
  unscheduled_job_ids: z.array(z.string()).describe('Runnable jobs beyond max_waves.'),
  retry_plan: z.array(
    z.object({
      job_id: z.string(),
      max_attempts: z.number().int(),
      backoff_seconds: z.array(z.number()),
      idempotency_key: z.string(),
      on_exhausted: z.enum(['halt_downstream', 'mark_failed_and_continue']),
    }),
  ),
  checkpoints: z.array(
    z.object({ after_wave: z.number().int(), job_ids: z.array(z.string()), reasons: z.array(z.string()) }),
  ),
  warnings: z.array(z.string()),
  integration_hints: z.array(integrationHint),
});

export type ExecutionOrchestrateRequest = z.infer<typeof executionOrchestrateRequest>;
export type ExecutionOrchestrateResponse = z.infer<typeof executionOrchestrateResponse>;
