import { z } from 'zod';
import { streams, workflowIds } from './workflow-ids';
import { blankAsAbsent } from './common';

export { PERMANENT_STEP_ERROR, STEP_REF, stepRefs } from './task-graph';

/** Step actions (spec: Task platform, step create `action`). */
export const STEP_ACTIONS = [
  'research',
  'fetch',
  'summarize',
  'compare',
  'draft',
  'generate',
  'save',
  'webhook',
] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];
/** Actions that call a model through the provider layer. */
export const MODEL_ACTIONS: readonly StepAction[] = ['research', 'summarize', 'compare', 'draft', 'generate'];

export const TASK_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const STEP_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const stringMap = (what: string) =>
  z
    .record(z.string().max(200), z.string().max(100_000, `${what} values are at most 100000 characters`))
    .refine((m) => Object.keys(m).length <= 50, `at most 50 ${what} keys`)
    .describe(`Object with string values only (${what}).`);

export const StepCreateBody = z
  .strictObject({
    id: z
      .string()
      .regex(STEP_ID_PATTERN, 'step id: 1-64 letters, digits, _ or -')
      .optional()
      .describe(
        'Optional client id, unique in the task; depends_on and {{steps.<id>.result}} refer to it. Generated when omitted.',
      ),
    title: z.string().min(1).max(500),
    action: z.enum(STEP_ACTIONS).describe('research, fetch, summarize, compare, draft, generate, save, webhook'),
    args: stringMap('args')
      .optional()
      .describe('String values only; keys topic, prompt, url, content, ...; may hold {{steps.<id>.result}}.'),
    depends_on: z.array(z.string().regex(STEP_ID_PATTERN, 'must be a step id')).max(100).optional(),
    order_num: z.number().int().min(0).max(1_000_000).optional(),
  })
  .meta({ id: 'StepCreate' });
export type StepCreateBody = z.infer<typeof StepCreateBody>;

export const TaskCreateBody = z
  .strictObject({
    title: z.string().min(1).max(500),
    description: z.string().max(20_000).optional(),
    surface: z.string().min(1).max(50).optional(),
    session_id: z.string().min(1).max(200).optional(),
    priority: z.number().int().min(-1000).max(1000).optional(),
    metadata: stringMap('metadata').optional(),
    steps: z.array(StepCreateBody).max(200).optional(),
  })
  .meta({ id: 'TaskCreate' });
export type TaskCreateBody = z.infer<typeof TaskCreateBody>;

export const TaskPatchBody = z
  .strictObject({
    title: z.string().min(1).max(500).optional(),
    description: z.string().max(20_000).nullable().optional(),
    status: z.enum(TASK_STATUSES).optional(),
    priority: z.number().int().min(-1000).max(1000).optional(),
    surface: z.string().min(1).max(50).nullable().optional(),
    session_id: z.string().min(1).max(200).nullable().optional(),
    metadata: stringMap('metadata').optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one field')
  .meta({ id: 'TaskUpdate' });
export type TaskPatchBody = z.infer<typeof TaskPatchBody>;

export const StepPatchBody = z
  .strictObject({
    status: z.enum(STEP_STATUSES).optional(),
    result: z.string().max(1_000_000).nullable().optional(),
  })
  .refine((b) => b.status !== undefined || b.result !== undefined, 'send status or result')
  .meta({ id: 'StepUpdate' });
export type StepPatchBody = z.infer<typeof StepPatchBody>;

export const TaskListQuery = z.strictObject({
  status: blankAsAbsent(z.enum(TASK_STATUSES).optional()),
  surface: blankAsAbsent(z.string().min(1).max(50).optional()),
  session_id: blankAsAbsent(z.string().min(1).max(200).optional()),
  limit: blankAsAbsent(z.coerce.number().int().min(1).max(200).default(50)),
  offset: blankAsAbsent(z.coerce.number().int().min(0).max(100_000).default(0)),
});

export const TaskIdParams = z.object({ id: z.string().min(1).max(100) });
export const StepIdParams = z.object({ id: z.string().min(1).max(100), step_id: z.string().min(1).max(100) });

export const Step = z
  .object({
    id: z.string(),
    task_id: z.string(),
    title: z.string(),
    action: z.enum(STEP_ACTIONS),
    args: z.record(z.string(), z.string()),
    depends_on: z.array(z.string()),
    order_num: z.number().int(),
    status: z.enum(STEP_STATUSES),
    result: z.string().nullable(),
    error: z.string().nullable(),
    attempts: z.number().int(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'Step' });
export type Step = z.infer<typeof Step>;

export const Task = z
  .object({
    id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    surface: z.string().nullable(),
    session_id: z.string().nullable(),
    priority: z.number().int(),
    metadata: z.record(z.string(), z.string()),
    status: z.enum(TASK_STATUSES),
    created_at: z.string(),
    updated_at: z.string(),
    steps: z.array(Step),
  })
  .meta({ id: 'Task' });
export type Task = z.infer<typeof Task>;

export const TaskList = z
  .object({ data: z.array(Task), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'TaskList' });

export const ExecutionStatus = z
  .object({
    task_id: z.string(),
    workflow_id: z.string(),
    run_id: z.string().nullable(),
    status: z.enum(TASK_STATUSES),
    source: z
      .enum(['workflow', 'database'])
      .describe('workflow = live query of the running workflow; database = stored state.'),
    attached: z
      .boolean()
      .optional()
      .describe('POST only: true when a run was already going and this call attached to it.'),
    steps: z.array(z.object({ id: z.string(), status: z.enum(STEP_STATUSES) })),
    last_event_id: z.string().nullable().describe('Id of the newest execution event (SSE Last-Event-ID).'),
  })
  .meta({ id: 'TaskExecutionStatus' });
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;

/** Streamed execution events (SSE `data`). */
export const StepEvent = z.object({
  task_id: z.string(),
  step_id: z.string(),
  status: z.enum(STEP_STATUSES),
  snippet: z.string(),
});
export type StepEvent = z.infer<typeof StepEvent>;
export const DoneEvent = z.object({
  done: z.literal(true),
  task_id: z.string(),
  status: z.string(),
  task: Task.nullable(),
});
export type DoneEvent = z.infer<typeof DoneEvent>;

/** Workflow input and query result. */
export interface TaskRunInput {
  tenantId: string;
  taskId: string;
  /**
   * What the API's claim decided (runs started before claims carried it have none and begin with a
   * local activity): the run key the claim stamped on the task and its open steps (every step write
   * checks it, so a stale run cannot write) and the plan (the steps to schedule).
   */
  claim?: TaskRunClaim;
  /**
   * Set by the API on every run it starts since the run loop waits on one promise per turn (see
   * `runDag`): runs started earlier (no flag in their input) replay with the loop they ran with.
   */
  wakeLoop?: true;
}
/** A claim's run: the run key stamped on the task and its open steps, and the steps to schedule. */
export interface TaskRunClaim {
  runKey: string;
  steps: TaskPlanStep[];
}
/**
 * What a `save` step with literal args saves (args.title or the step's title, args.content), carried
 * in the run's plan so its activity writes the start and the completion in one statement. Only when
 * small: the history carries ids and snippets.
 */
export interface LiteralSave {
  title: string;
  content: string;
}
/** One step of a run's plan: ids and statuses, and a small literal save's title and content. */
export interface TaskPlanStep {
  id: string;
  action: string;
  depends_on: string[];
  status: StepStatus;
  lit?: LiteralSave;
}
export interface TaskRunState {
  status: TaskStatus;
  steps: Array<{ id: string; status: StepStatus }>;
}

/**
 * Task transitions a client may request with PATCH (others belong to the runner):
 * pending → completed | cancelled; running → cancelled; completed | failed | cancelled → pending (reopen).
 */
export const TASK_PATCH_TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  pending: ['completed', 'cancelled'],
  running: ['cancelled'],
  completed: ['pending'],
  failed: ['pending'],
  cancelled: ['pending'],
};

/** Step transitions a client may request with PATCH (only while the task is not running). */
export const STEP_PATCH_TRANSITIONS: Record<StepStatus, readonly StepStatus[]> = {
  pending: ['completed', 'skipped'],
  running: [],
  completed: ['pending'],
  failed: ['pending', 'completed'],
  skipped: ['pending', 'completed'],
  cancelled: ['pending', 'completed'],
};

export function taskPatchAllowed(from: TaskStatus, to: TaskStatus): boolean {
  return from === to || TASK_PATCH_TRANSITIONS[from].includes(to);
}
export function stepPatchAllowed(from: StepStatus, to: StepStatus): boolean {
  return from === to || STEP_PATCH_TRANSITIONS[from].includes(to);
}

export const taskStream = streams.task;
export const taskWorkflowId = workflowIds.task;
