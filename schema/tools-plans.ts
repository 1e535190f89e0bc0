import { z } from 'zod';

/** `{{steps.<id>.result}}` or `{{steps.<id>.result.<path>}}` inside a plan step's string args. */
export const PLAN_REF = /\{\{\s*steps\.([A-Za-z0-9_-]{1,64})\.result((?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
/** A string that is one reference and nothing else: replaced by the referenced value itself (any type). */
export const WHOLE_PLAN_REF = /^\{\{\s*steps\.([A-Za-z0-9_-]{1,64})\.result((?:\.[A-Za-z0-9_-]+)*)\s*\}\}$/;

const StepId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');

export const PlanStepIn = z
  .strictObject({
    id: StepId,
    tool: z.string().min(1).max(100).describe('A tool name from GET /v1/tools.'),
    args: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Arguments; strings may reference earlier results: {{steps.<id>.result.<path>}}.'),
    depends_on: z.array(StepId).max(50).default([]).describe('Steps that must complete first (references add theirs).'),
    approval: z
      .boolean()
      .optional()
      .describe('Force an approval gate on this step (destructive/external ones have one).'),
    note: z.string().max(500).optional(),
  })
  .meta({ id: 'ToolPlanStepInput' });
export type PlanStepIn = z.output<typeof PlanStepIn>;

export const PlanCreateBody = z
  .strictObject({
    goal: z.string().trim().min(1).max(4000),
    context: z.string().max(20_000).optional(),
    tools: z.array(z.string().min(1).max(100)).min(1).max(100).optional().describe('Only these tools may be used.'),
    constraints: z.array(z.string().min(1).max(500)).max(20).optional(),
    steps: z
      .array(PlanStepIn)
      .min(1)
      .max(50)
      .optional()
      .describe('Given: the plan is exactly these steps (deterministic). Absent: the model writes them.'),
  })
  .meta({ id: 'ToolPlanCreate' });
export type PlanCreateBody = z.output<typeof PlanCreateBody>;

export const PlanStep = z
  .object({
    id: z.string(),
    tool: z.string(),
    args: z.record(z.string(), z.unknown()),
    depends_on: z.array(z.string()),
    note: z.string().optional(),
    level: z.number().int().describe('0 for steps without dependencies; 1 + the deepest dependency otherwise.'),
    gate: z.boolean().describe('Needs approval before it runs (destructive, external write, or approval: true).'),
    read_only: z.boolean(),
    destructive: z.boolean(),
    external: z.boolean(),
    scope: z.string(),
    estimate_ms: z.number().int(),
  })
  .meta({ id: 'ToolPlanStep' });
export type PlanStep = z.infer<typeof PlanStep>;

export const ToolPlan = z
  .object({
    id: z.string(),
    object: z.literal('tool.plan'),
    goal: z.string(),
    source: z.enum(['given', 'model']),
    steps: z.array(PlanStep),
    levels: z.array(z.array(z.string())).describe('Steps that can run in parallel, level by level.'),
    critical_path: z.object({ steps: z.array(z.string()), estimate_ms: z.number().int() }),
    gates: z.array(z.string()).describe('Steps that wait for approval.'),
    preview: z.array(z.string()).describe('Dry-run preview: what each step would do, in run order.'),
    created_at: z.string(),
  })
  .meta({ id: 'ToolPlan' });
export type ToolPlan = z.infer<typeof ToolPlan>;

export const PlanIdParams = z.object({ id: z.string().regex(/^tpl_[A-Za-z0-9_-]{1,60}$/, 'must be a plan id') });
export const RunIdParams = z.object({ id: z.string().regex(/^tpr_[A-Za-z0-9_-]{1,60}$/, 'must be a plan run id') });

export const ExecutePlanBody = z
  .strictObject({
    plan_id: z
      .string()
      .regex(/^tpl_[A-Za-z0-9_-]{1,60}$/, 'must be a plan id')
      .optional(),
    plan: PlanCreateBody.optional().describe('A plan to store and run at once (same body as POST /v1/tools/plan).'),
    approve: z.array(StepId).max(50).default([]).describe('Gated steps approved up front.'),
    dry_run: z.boolean().default(false).describe('Validate and preview only: nothing runs, no workflow starts.'),
  })
  .refine((b) => (b.plan_id === undefined) !== (b.plan === undefined), {
    message: 'give exactly one of plan_id and plan',
    path: ['plan_id'],
  })
  .meta({ id: 'ToolPlanExecute' });

export const PLAN_RUN_STATUSES = [
  'running',
  'awaiting_approval',
  'completed',
  'failed',
  'cancelled',
  'dry_run',
] as const;
export type PlanRunStatus = (typeof PLAN_RUN_STATUSES)[number];
export const PLAN_STEP_STATUSES = [
  'pending',
  'awaiting_approval',
  'running',
  'completed',
  'failed',
  'skipped',
  'cancelled',
] as const;
export type PlanStepStatus = (typeof PLAN_STEP_STATUSES)[number];

export const PlanRun = z
  .object({
    id: z.string(),
    object: z.literal('tool.plan.run'),
    plan_id: z.string(),
    workflow_id: z.string().nullable().describe('plan-<run id>; null for a dry run.'),
    status: z.enum(PLAN_RUN_STATUSES),
    approved: z.array(z.string()),
    awaiting: z.array(z.string()).describe('Gated steps waiting for POST /v1/tools/plans/runs/{id}/approve.'),
    steps: z.array(
      z.object({
        id: z.string(),
        tool: z.string(),
        status: z.enum(PLAN_STEP_STATUSES),
        result: z.unknown().optional(),
        error: z.string().nullable().optional(),
      }),
    ),
    plan: ToolPlan.optional().describe('The plan (on dry runs: the preview to check).'),
    last_event_id: z.string().nullable(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'ToolPlanRun' });
export type PlanRun = z.infer<typeof PlanRun>;

export const ApproveBody = z
  .strictObject({ steps: z.array(StepId).min(1).max(50).describe('Gated step ids to approve.') })
  .meta({ id: 'ToolPlanApprove' });

/** What the plan workflow needs of each step (no args: they stay in PostgreSQL). */
export interface PlanWorkflowStep {
  id: string;
  depends_on: string[];
  gate: boolean;
  /**
   * Run as a local activity (in the worker that runs the workflow task, no task-queue round trip and no
   * new workflow task per level): set for in-process tools that read nothing outside (commons,
   * reasoning compilers). Absent in runs started before it existed: a regular activity.
   */
  local?: boolean;
}
export interface PlanWorkflowInput {
  tenantId: string;
  runId: string;
  steps: PlanWorkflowStep[];
  approved: string[];
}
export interface PlanRunState {
  status: PlanRunStatus;
  awaiting: string[];
  approved: string[];
  steps: Array<{ id: string; status: PlanStepStatus }>;
}
