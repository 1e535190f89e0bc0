/** State shapes shared by the job workflows, their activities and the API (types only, no logic). */

export interface PlanStepState {
  index: number;
  title: string;
  prompt: string;
  lane: string;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
  outputId: string | null;
  /** First characters of the output; the full text lives in job_outputs. */
  snippet: string | null;
}

export interface GoalState {
  goalId: string;
  tenantId: string;
  kind: 'goal' | 'sovereign';
  title: string;
  description: string | null;
  lane: string;
  status: string;
  plan: PlanStepState[];
  stepIndex: number;
  paused: boolean;
  lastStep: { index: number; title: string; outputId: string; snippet: string } | null;
  resultOutputId: string | null;
  error: string | null;
}

/**
 * What a workflow writes to its goal row: the goal fields, and either the whole plan (after
 * planning, on cancellation) or only the steps that changed (every step), so payloads and
 * history stay small however long the plan is.
 */
export type GoalSnapshot = Omit<GoalState, 'plan' | 'paused'> & {
  totalSteps: number;
  plan?: PlanStepState[];
  steps?: PlanStepState[];
};

/**
 * The answer of a sovereign tick. The API builds the full goal from what it already knows of the
 * goal (title, plan, earlier outputs: they never change) and the step this tick ran; it reads the
 * row when it knows too little (see api/sovereign-views.ts).
 */
export interface TickResult {
  status: string;
  stepIndex: number;
  totalSteps: number;
  lastStep: GoalState['lastStep'];
  error: string | null;
  /**
   * When the step succeeded and saved the row itself: the plan entry as it is now, the row's
   * `updated_at` that save wrote, and whether the entry's snippet is its whole output. Absent from
   * ticks of older workers, of failed steps and of runs that save the row with a local activity.
   */
  saved?: { step: PlanStepState; updatedAt: string; snippetIsWhole: boolean };
}

export interface StepOutputRef {
  outputId: string;
  snippet: string;
  provider: string | null;
  durationMs: number;
  /** True when the output already existed (a retried or replayed step): the model was not called. */
  reused: boolean;
  /** True when the step also wrote its goal's snapshot (`RunStepInput.snapshotAfter`). */
  snapshotSaved?: boolean;
  /** With the snapshot: the goal row's new `updated_at` (null when the row is gone). */
  savedAt?: string | null;
  /** With the snapshot: the snippet is the whole output (short outputs are not cut). */
  snippetIsWhole?: boolean;
}

/**
 * The goal row as it is once a step succeeded, less what only the step knows (its output): the
 * step activity writes it with the output, so the workflow needs no local activity for it.
 */
export type SnapshotAfterStep = Omit<GoalSnapshot, 'lastStep' | 'steps' | 'resultOutputId'> & {
  step: PlanStepState;
};

export interface PadAgentInput {
  index: number;
  name: string;
  prompt: string;
  lane: string;
  surface: string | null;
}

export interface PadInput {
  sessionId: string;
  tenantId: string;
  maxConcurrency: number;
  agents: PadAgentInput[];
}

export interface SwarmInput {
  runId: string;
  tenantId: string;
  operation: string;
  params: Record<string, unknown>;
}
