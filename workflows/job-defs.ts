import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { GoalState, TickResult } from './job-types';

/** Live state of a goal or sovereign goal (polling reads this while the workflow runs). */
export const goalStateQuery = defineQuery<GoalState>('goalState');
export const pauseGoalSignal = defineSignal('pauseGoal');
export const resumeGoalSignal = defineSignal('resumeGoal');
export const renameGoalSignal = defineSignal<[{ title?: string; description?: string }]>('renameGoal');
/** Runs exactly one step of a sovereign goal and answers with the new state. */
export const tickUpdate = defineUpdate<TickResult>('tick');
/** Answers once a sovereign goal is planned (and the plan saved) or has ended; the goal's state then. */
export const awaitPlannedUpdate = defineUpdate<GoalState>('awaitPlanned');

export interface PadLiveState {
  running: number[];
  done: number[];
}
export const padStateQuery = defineQuery<PadLiveState>('padState');
