import { z } from 'zod';
import { blankAsAbsent } from './common';
import { PUBLIC_LANES } from './model-config';

/** Public lanes a job step may use: the chat gateway's lane ids. */
export const jobLane = z.enum(PUBLIC_LANES);

export const PlanStepInput = z.object({
  title: z.string().min(1).max(200),
  prompt: z.string().min(1).max(8000),
  lane: jobLane.optional(),
});

export const GoalCreateBody = z
  .object({
    title: z.string().min(1).max(200),
    description: z.string().max(8000).optional(),
    steps: z
      .array(PlanStepInput)
      .min(1)
      .max(50)
      .optional()
      .describe('A deterministic plan; without it the model plans.'),
    lane: jobLane.optional().describe('Lane for planning and for steps without their own (default svc-oracle).'),
  })
  .meta({ id: 'GoalCreate' });

export const GoalUpdateBody = z
  .object({
    title: z.string().min(1).max(200).optional(),
    description: z.string().max(8000).optional(),
    status: z.enum(['paused', 'running']).optional().describe('paused pauses after the running step; running resumes.'),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of title, description, status' })
  .meta({ id: 'GoalUpdate' });

export const SovereignCreateBody = z
  .object({
    title: z.string().min(1).max(200),
    description: z.string().max(8000).optional(),
    steps: z.array(PlanStepInput).min(1).max(1000).optional(),
    lane: jobLane.optional(),
  })
  .meta({ id: 'SovereignGoalCreate' });

export const GOAL_STATUSES = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export const SOVEREIGN_STATUSES = ['planning', 'ready', 'running', 'completed', 'failed', 'cancelled'] as const;

/** One planned step as stored and returned. */
export const PlanStep = z.object({
  index: z.number().int(),
  title: z.string(),
  prompt: z.string(),
  lane: z.string(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'cancelled']),
  output_id: z.string().nullable(),
  output: z.string().nullable().describe('The step output (stored in PostgreSQL, passed by id).'),
});
export type PlanStep = z.infer<typeof PlanStep>;

export const Goal = z
  .object({
    id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(GOAL_STATUSES),
    plan: z.array(PlanStep),
    progress: z.object({ done: z.number().int(), total: z.number().int() }),
    result: z.string().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Goal' });

export const LastStep = z.object({
  index: z.number().int(),
  title: z.string(),
  output_id: z.string(),
  output: z.string(),
});

export const SovereignGoal = z
  .object({
    id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(SOVEREIGN_STATUSES),
    plan: z.array(PlanStep),
    step_index: z.number().int().describe('Steps completed so far; the next tick runs plan[step_index].'),
    total_steps: z.number().int(),
    last_step: LastStep.nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'SovereignGoal' });

export const PadDispatchBody = z
  .object({
    agents: z
      .array(
        z.object({
          name: z.string().min(1).max(100),
          prompt: z.string().min(1).max(8000),
          lane: jobLane.optional(),
          surface: z.string().max(50).optional(),
        }),
      )
      .min(1)
      .max(100),
    max_concurrency: z.number().int().min(1).max(16).optional().describe('Agents running at once (default 4).'),
  })
  .meta({ id: 'PadDispatch' });

export const PadAgent = z.object({
  index: z.number().int(),
  name: z.string(),
  lane: z.string(),
  surface: z.string().nullable(),
  status: z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
  output_id: z.string().nullable(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  attempts: z.number().int(),
  duration_ms: z.number().int().nullable(),
});

export const PadSession = z
  .object({
    id: z.string(),
    status: z.enum(['running', 'completed', 'cancelled']),
    max_concurrency: z.number().int(),
    agents: z.array(PadAgent),
    summary: z.object({
      total: z.number(),
      queued: z.number(),
      running: z.number(),
      completed: z.number(),
      failed: z.number(),
    }),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'PadSession' });

export const PadStats = z
  .object({
    window_sessions: z.number().int().describe('How many recent sessions the figures cover (newest 100).'),
    sessions: z.object({ running: z.number(), completed: z.number(), cancelled: z.number() }),
    agents: z.object({ total: z.number(), completed: z.number(), failed: z.number() }),
    success_rate: z.number().nullable(),
    duration_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
    agents_per_second: z.number().nullable(),
  })
  .meta({ id: 'PadStats' });

// ---- Swarm: a registry of operations, each with its own params schema ----

const lanes = { lane: jobLane.optional() };
export const SWARM_OPERATIONS = {
  map: z.object({
    prompt: z.string().min(1).max(4000).describe('Template applied to each item; {{item}} is replaced.'),
    items: z.array(z.string().min(1).max(4000)).min(1).max(200),
    max_concurrency: z.number().int().min(1).max(16).optional(),
    ...lanes,
  }),
  vote: z.object({
    question: z.string().min(1).max(4000),
    voters: z.number().int().min(2).max(15).default(5),
    options: z.array(z.string().min(1).max(200)).min(2).max(20).optional(),
    ...lanes,
  }),
  debate: z.object({
    question: z.string().min(1).max(4000),
    debaters: z.number().int().min(2).max(4).default(2),
    rounds: z.number().int().min(1).max(5).default(2),
    ...lanes,
  }),
  fanout_reduce: z.object({
    task: z.string().min(1).max(4000),
    subtasks: z.array(z.string().min(1).max(4000)).min(1).max(50),
    reduce_prompt: z.string().max(4000).optional(),
    max_concurrency: z.number().int().min(1).max(16).optional(),
    ...lanes,
  }),
} as const;
export type SwarmOperation = keyof typeof SWARM_OPERATIONS;
export const SWARM_OPERATION_NAMES = Object.keys(SWARM_OPERATIONS) as SwarmOperation[];

export const SwarmRunBody = z
  .object({
    operation: z
      .string()
      .min(1)
      .max(50)
      .describe(`One of: ${Object.keys(SWARM_OPERATIONS).join(', ')}.`),
    params: z.record(z.string(), z.unknown()).default({}),
  })
  .meta({ id: 'SwarmRun' });

export const SwarmRunRecord = z
  .object({
    id: z.string(),
    operation: z.string(),
    params: z.unknown(),
    status: z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
    progress: z.object({ done: z.number(), total: z.number() }),
    result: z.unknown().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'SwarmRunRecord' });

export const JobCreated = z.object({ id: z.string(), status: z.string() }).loose();

export const ListQuery = z.object({
  limit: blankAsAbsent(z.coerce.number().int().min(1).max(100).default(20)),
  offset: blankAsAbsent(z.coerce.number().int().min(0).max(100_000).default(0)),
});
