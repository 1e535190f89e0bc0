import { outputsById } from '../activities/store/job-outputs';
import type { GoalRow } from '../activities/store/goals';
import type { Db } from '../activities/store/db';
import type { GoalState, PlanStepState, TickResult } from '../workflows/job-types';

/** A goal's state from its workflow (live) or its row (finished or not yet started). */
export function stateFromRow(r: GoalRow): GoalState {
  return {
    goalId: r.id,
    tenantId: r.tenant_id,
    kind: r.kind,
    title: r.title,
    description: r.description,
    lane: r.lane,
    status: r.status,
    plan: r.plan as PlanStepState[],
    stepIndex: r.step_index,
    paused: r.status === 'paused',
    lastStep: (r.last_step as GoalState['lastStep']) ?? null,
    resultOutputId: r.result,
    error: r.error,
  };
}

async function outputsOf(db: Db, s: GoalState): Promise<Map<string, string>> {
  const ids = s.plan.map((p) => p.outputId).filter((x): x is string => Boolean(x));
  return outputsById(db, s.tenantId, ids);
}

/** One plan entry of a goal's answer. */
export function planEntryView(p: PlanStepState, outputs: ReadonlyMap<string, string>) {
  return {
    index: p.index,
    title: p.title,
    prompt: p.prompt,
    lane: p.lane,
    status: p.status,
    output_id: p.outputId,
    output: p.outputId ? (outputs.get(p.outputId) ?? p.snippet) : null,
  };
}

function planView(s: GoalState, outputs: ReadonlyMap<string, string>) {
  return s.plan.map((p) => planEntryView(p, outputs));
}

/**
 * `JSON.stringify(view)` with the text of its `plan` given (`planJson`, e.g. joined from entries
 * serialised once): the same text, key for key, without serialising the plan again.
 */
export function viewJsonWithPlan(view: Record<string, unknown>, planJson: string): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(view)) {
    if (key === 'plan') parts.push(`"plan":${planJson}`);
    else if (value !== undefined) parts.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  }
  return `{${parts.join(',')}}`;
}

type Times = { created_at: string; updated_at: string };

/** The fields goals and sovereign goals share, in answer order: `head`, then the kind's own, then `tail`. */
const head = (s: GoalState, plan: unknown) => ({
  id: s.goalId,
  title: s.title,
  description: s.description,
  status: s.status,
  plan,
});
const tail = (s: GoalState, times: Times) => ({
  error: s.error,
  created_at: times.created_at,
  updated_at: times.updated_at,
});

export async function goalView(db: Db, s: GoalState, times: Times) {
  const outputs = await outputsOf(db, s);
  const done = s.plan.filter((p) => p.status === 'completed').length;
  return {
    ...head(s, planView(s, outputs)),
    progress: { done, total: s.plan.length },
    result: s.resultOutputId ? (outputs.get(s.resultOutputId) ?? null) : null,
    ...tail(s, times),
  };
}

export async function sovereignView(db: Db, s: GoalState, times: Times) {
  return sovereignViewWith(await outputsOf(db, s), s, times);
}

/** A goal's state after a tick: the row as known, with what the tick's update answered (`plan` when newer than the row's). */
export function stateAfterTick(row: GoalRow, tick: TickResult, plan?: PlanStepState[]): GoalState {
  return {
    ...stateFromRow(row),
    ...(plan ? { plan } : {}),
    status: tick.status,
    stepIndex: tick.stepIndex,
    lastStep: tick.lastStep,
    error: tick.error,
  };
}

/** `sovereignView` with the outputs already read (e.g. by getGoalWithOutputs); `plan`: the plan's value when made already. */
export function sovereignViewWith(
  outputs: ReadonlyMap<string, string>,
  s: GoalState,
  times: Times,
  plan: unknown = planView(s, outputs),
) {
  return {
    ...head(s, plan),
    step_index: s.stepIndex,
    total_steps: s.plan.length,
    last_step: s.lastStep
      ? {
          index: s.lastStep.index,
          title: s.lastStep.title,
          output_id: s.lastStep.outputId,
          output: outputs.get(s.lastStep.outputId) ?? s.lastStep.snippet,
        }
      : null,
    ...tail(s, times),
  };
}

/** `sovereignViewWith` without its `plan`: the answer of a tick made with `Prefer: return=minimal`. */
export function sovereignSummaryWith(outputs: ReadonlyMap<string, string>, s: GoalState, times: Times) {
  const { plan: _plan, ...summary } = sovereignViewWith(outputs, s, times, null);
  return summary;
}

/**
 * `JSON.stringify(sovereignViewWith(outputs, s, times))` with the plan's text given (`planJson`, e.g.
 * joined from entries serialised once): the plan's entries are not built as values at all.
 */
export function sovereignJsonWith(
  outputs: ReadonlyMap<string, string>,
  s: GoalState,
  times: Times,
  planJson: string,
): string {
  return viewJsonWithPlan(sovereignViewWith(outputs, s, times, null), planJson);
}
