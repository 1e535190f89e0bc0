import { planEntryView, sovereignJsonWith, sovereignViewWith, viewJsonWithPlan } from '../../api/job-views';
import type { GoalState, PlanStepState } from '../../workflows/job-types';

const entry = (i: number, done: boolean): PlanStepState => ({
  index: i,
  title: `S${i} "quoted" \\ \u2028 ünï`,
  prompt: `Do ${i}.\nThen stop.`,
  lane: 'svc-oracle',
  status: done ? 'completed' : 'pending',
  outputId: done ? `out_${i}` : null,
  snippet: done ? `snip ${i}` : null,
});

test('a sovereign answer made from its entries\u2019 texts is JSON.stringify of the answer, byte for byte', () => {
  const plan = [entry(0, true), entry(1, true), entry(2, false)];
  const outputs = new Map([['out_0', 'full "0" </script>']]); // out_1 unknown: its snippet shows
  const base: GoalState = {
    goalId: 'sov_1',
    tenantId: 't_1',
    kind: 'sovereign',
    title: 'T "x"',
    description: null,
    lane: 'svc-oracle',
    status: 'ready',
    plan,
    stepIndex: 2,
    paused: false,
    lastStep: { index: 1, title: 'S1', outputId: 'out_1', snippet: 'snip 1' },
    resultOutputId: null,
    error: null,
  };
  const times = { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z' };
  for (const s of [base, { ...base, description: 'd', lastStep: null, error: 'e\n', status: 'failed' }]) {
    const view = sovereignViewWith(outputs, s, times);
    const entries = s.plan.map((p) => JSON.stringify(planEntryView(p, outputs)));
    expect(viewJsonWithPlan(view, `[${entries.join(',')}]`)).toBe(JSON.stringify(view));
    expect(sovereignJsonWith(outputs, s, times, `[${entries.join(',')}]`)).toBe(JSON.stringify(view));
  }
});
