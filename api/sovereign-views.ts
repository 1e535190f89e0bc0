import { LRUCache } from 'lru-cache';
import { outputsById } from '../activities/store/job-outputs';
import type { GoalRow } from '../activities/store/goals';
import type { PlanStepState, TickResult } from '../workflows/job-types';
import type { AppContext } from './context';
import { planEntryView, sovereignJsonWith, sovereignSummaryWith, sovereignViewWith, stateAfterTick } from './job-views';

/**
 * What this process knows of a sovereign goal, so that a tick can answer with the whole goal
 * without reading it back: the row as last read (title, description and `created_at` never change
 * for a sovereign goal), the plan as last known, and the full texts of its completed steps' outputs.
 * A completed plan entry never changes again (a later failure or cancellation only touches the
 * entries after it) and outputs are immutable, so what is known of the steps before a tick's step
 * is exact; the tick's own step comes from the workflow (`TickResult.saved`).
 */
interface KnownGoal {
  row: GoalRow;
  plan: PlanStepState[];
  outputs: Map<string, string>;
  /** Each plan entry's answer text (`planEntryView`), made once and dropped when the entry changes. */
  entryJson: Array<string | undefined>;
}

/** The goals known per database (one per app instance), keyed by tenant and goal id; bounded by size. */
const knownGoals = new WeakMap<object, LRUCache<string, KnownGoal>>();
const MAX_BYTES = 64 * 2 ** 20;

/** Rough size in memory: the texts (2 bytes a character) and a fixed cost per plan entry. */
function sizeOf(k: KnownGoal): number {
  let n = 1_000;
  for (const p of k.plan) n += 200 + 2 * (p.title.length + p.prompt.length + (p.snippet?.length ?? 0));
  for (const text of k.outputs.values()) n += 100 + 2 * text.length;
  for (const json of k.entryJson) n += json ? 2 * json.length : 0;
  return n;
}

function cacheOf(ctx: AppContext): LRUCache<string, KnownGoal> {
  let cache = knownGoals.get(ctx.deps.db);
  if (!cache)
    knownGoals.set(
      ctx.deps.db,
      (cache = new LRUCache<string, KnownGoal>({ max: 10_000, maxSize: MAX_BYTES, sizeCalculation: sizeOf })),
    );
  return cache;
}

const keyOf = (tenantId: string, id: string) => `${tenantId}\u0000${id}`;

/**
 * Remembers a sovereign goal row as read (or created) under its tenant, with the full texts of the
 * outputs read with it (`outputs` must hold every completed entry's output to be of use).
 */
export function rememberSovereign(ctx: AppContext, row: GoalRow, outputs: ReadonlyMap<string, string>): void {
  if (row.kind !== 'sovereign') return;
  const plan = row.plan as PlanStepState[];
  const own = new Map<string, string>();
  for (const p of plan) {
    if (p.status !== 'completed') continue;
    const text = p.outputId ? outputs.get(p.outputId) : undefined;
    if (text === undefined) return; // incomplete: a tick will read the goal instead
    own.set(p.outputId!, text);
  }
  cacheOf(ctx).set(keyOf(row.tenant_id, row.id), { row, plan: [...plan], outputs: own, entryJson: [] });
}

/** Whether a tick of this goal may be answered from what is known (see `answerFromKnown`). */
export function knowsSovereign(ctx: AppContext, tenantId: string, id: string): boolean {
  return cacheOf(ctx).has(keyOf(tenantId, id));
}

/** The full texts of the outputs known for this goal (a copy), for a tick that must read the rest. */
export function knownOutputs(ctx: AppContext, tenantId: string, id: string): Map<string, string> {
  return new Map(cacheOf(ctx).get(keyOf(tenantId, id))?.outputs);
}

export function forgetSovereign(ctx: AppContext, tenantId: string, id: string): void {
  cacheOf(ctx).delete(keyOf(tenantId, id));
}

/**
 * The answer of a successful tick built from what is known of the goal and the tick's own step,
 * without reading the row: as a value for `'value'` (an answer stored under an Idempotency-Key), as
 * its JSON text only for `'text'` (the same as `JSON.stringify` of the value, made from each entry's
 * text), or the goal without its plan for `'minimal'` (`Prefer: return=minimal`).
 * Undefined when that is not enough (goal not known, a step before this one not known completed
 * with its output, e.g. run by another process, or a tick from an older worker): the caller reads
 * the goal. Only an output longer than its snippet is read (by id).
 */
export async function answerFromKnown(
  ctx: AppContext,
  tenantId: string,
  id: string,
  tick: TickResult,
  answer: 'value' | 'text' | 'minimal',
): Promise<{ view: object } | { json: string } | undefined> {
  const saved = tick.saved;
  if (!saved) return undefined;
  const key = keyOf(tenantId, id);
  const cache = cacheOf(ctx);
  const before = cache.get(key);
  const step = saved.step;
  if (!before || !known(before, step, tick.totalSteps)) return undefined;
  let text: string | undefined = saved.snippetIsWhole ? (step.snippet ?? '') : undefined;
  if (text === undefined) {
    text = (await outputsById(ctx.deps.db, tenantId, [step.outputId!])).get(step.outputId!);
    if (text === undefined) return undefined;
  }
  // Another tick may have changed or dropped the entry meanwhile: use and check the current one.
  const k = cache.get(key);
  if (!k || !known(k, step, tick.totalSteps)) return undefined;
  k.plan[step.index] = step;
  k.entryJson[step.index] = undefined;
  k.outputs.set(step.outputId!, text);
  const state = stateAfterTick(k.row, tick, k.plan);
  const times = { created_at: k.row.created_at, updated_at: saved.updatedAt };
  if (answer !== 'text') {
    cache.set(key, k); // its size changed
    if (answer === 'minimal') return { view: sovereignSummaryWith(k.outputs, state, times) };
    return { view: sovereignViewWith(k.outputs, state, times) };
  }
  // The answer's text, from each entry's text made once (a 500-step plan is ~64 KB to serialise).
  const plan = k.plan.map((p, i) => (k.entryJson[i] ??= JSON.stringify(planEntryView(p, k.outputs))));
  cache.set(key, k); // its size changed
  return { json: sovereignJsonWith(k.outputs, state, times, `[${plan.join(',')}]`) };
}

/** Every entry before `step` is known completed with its output, and the plan has the tick's length. */
function known(k: KnownGoal, step: PlanStepState, totalSteps: number): boolean {
  if (k.plan.length !== totalSteps || step.index >= totalSteps || step.status !== 'completed' || !step.outputId)
    return false;
  for (let i = 0; i < step.index; i++) {
    const p = k.plan[i];
    if (p.status !== 'completed' || !p.outputId || !k.outputs.has(p.outputId)) return false;
  }
  return true;
}
