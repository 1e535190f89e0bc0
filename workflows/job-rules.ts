import type { PlanStepState } from './job-types';

/** Pure rules shared by the job workflows and the API (no Temporal imports, safe anywhere). */
export const isTerminal = (status: string) => ['completed', 'failed', 'cancelled'].includes(status);

export function planFrom(
  steps: Array<{ title: string; prompt: string; lane?: string }>,
  lane: string,
): PlanStepState[] {
  return steps.map((p, index) => ({
    index,
    title: p.title,
    prompt: p.prompt,
    lane: p.lane ?? lane,
    status: 'pending',
    outputId: null,
    snippet: null,
  }));
}

/** How many model steps a swarm operation runs (for progress). */
export function swarmStepCount(operation: string, p: Record<string, unknown>): number {
  switch (operation) {
    case 'map':
      return (p.items as unknown[]).length;
    case 'vote':
      return p.voters as number;
    case 'debate':
      return (p.debaters as number) * (p.rounds as number) + 1;
    case 'fanout_reduce':
      return (p.subtasks as unknown[]).length + 1;
    default:
      return 0;
  }
}
