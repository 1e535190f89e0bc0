import fc from 'fast-check';
import { questScaffold as ep } from '../../reasoning/quest-scaffold';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown, surface?: string) => ep.compile(ep.request.parse(body), { surface });

describe('quest/scaffold golden example', () => {
  const out = run(ep.example);
  it('names the quest and role from the goal', () => {
    expect(out.named_quest.name).toBe('Thesis Introduction Quest');
    expect(out.role_identity.role).toBe('Author');
  });
  it('turns headings into milestones and bullets/imperatives into steps, splitting long ones', () => {
    expect(out.milestones.map((m) => m.title)).toEqual(['Research', 'Writing']);
    expect(out.progress_model.total_steps).toBe(out.visible_steps.length + out.hidden_step_count);
    // low energy caps steps at 15 minutes: the 90-minute draft becomes 6 parts
    expect(out.milestones[1].step_count).toBeGreaterThanOrEqual(8);
    expect(out.visible_steps.every((s) => s.minutes <= 15)).toBe(true);
  });
  it('honours maxVisibleSteps and starts small', () => {
    expect(out.visible_steps).toHaveLength(4);
    expect(out.workspace_sections.find((w) => w.id === 'now')!.step_ids).toEqual(out.visible_steps.map((s) => s.id));
    expect(out.first_action.step_id).toBe('step-1');
    expect(out.first_action.minutes).toBeLessThanOrEqual(5);
  });
  it('follows the constraints in the rhythm and dates reviews in the zone', () => {
    expect(out.daily_rhythm.daily_minutes).toBeLessThanOrEqual(45);
    expect(out.daily_rhythm.days).toEqual(['mon', 'tue', 'wed', 'thu', 'fri']);
    expect(out.review_schedule[0]).toEqual({
      kind: 'daily_check',
      day_offset: 1,
      at: '2026-05-05T09:00:00+02:00',
      milestone_id: null,
    });
    expect(out.review_schedule.filter((r) => r.kind === 'milestone_review').map((r) => r.milestone_id)).toEqual([
      'ms-1',
      'ms-2',
    ]);
  });
  it('shows at most 3 steps to an overwhelm-sensitive person and derives steps from a bare goal', () => {
    const o = run({ goal: 'Declutter the garage', preferences: { overwhelmSensitive: true, maxVisibleSteps: 10 } });
    expect(o.visible_steps.length).toBe(3);
    expect(o.role_identity.role).toBe('Curator');
    expect(o.review_schedule.every((r) => r.at === null)).toBe(true);
  });
});

describe('quest/scaffold request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, {}, 'goal');
    expectRejectsAt(ep.request, { goal: 'x', preferences: { maxVisibleSteps: 0 } }, 'preferences.maxVisibleSteps');
    expectRejectsAt(
      ep.request,
      { goal: 'x', preferences: { preferredStepMins: 'long' } },
      'preferences.preferredStepMins',
    );
    expectRejectsAt(
      ep.request,
      { goal: 'x', preferences: { overwhelmSensitive: 'yes' } },
      'preferences.overwhelmSensitive',
    );
    expectRejectsAt(ep.request, { goal: 'x', constraints: [1] }, 'constraints.0');
    expectRejectsAt(ep.request, { goal: 'x', constraints: Array(101).fill('c') }, 'constraints');
    expectRejectsAt(ep.request, { goal: 'x', notes: 'n'.repeat(20_001) }, 'notes');
  });
});

const line = fc.oneof(
  fc.constantFrom('Research:', '# Build', 'Writing:', '', 'I need to call the bank.', 'Random musing here.'),
  fc
    .tuple(
      fc.constantFrom('- ', '1. ', '* '),
      fc.constantFrom('write the plan', 'read chapter 2 (45 min)', 'email Sam', 'build the shed 3h', 'tidy desk'),
    )
    .map(([a, b]) => a + b),
);
const reqArb = fc.record({
  goal: fc.string({ minLength: 1, maxLength: 80 }),
  notes: fc.option(
    fc.array(line, { maxLength: 15 }).map((l) => l.join('\n')),
    { nil: undefined },
  ),
  constraints: fc.array(
    fc.constantFrom('max 30 minutes per day', '2 hours a day', 'no weekends', 'mornings only', 'weekends only', 'x'),
    { maxLength: 3 },
  ),
  preferences: fc.record(
    {
      maxVisibleSteps: fc.integer({ min: 1, max: 50 }),
      preferredStepMins: fc.integer({ min: 1, max: 240 }),
      energy: fc.constantFrom('low', 'high', 'medium', '??'),
      overwhelmSensitive: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
  now: fc.option(fc.constantFrom('2026-03-28T23:30:00', 'nope'), { nil: undefined }),
  timezone: fc.option(fc.constantFrom('Europe/Paris', 'Bad/Zone'), { nil: undefined }),
});

describe('quest/scaffold properties', () => {
  it('never throws, is deterministic, honours caps and keeps references valid', () => {
    fc.assert(
      fc.property(reqArb, (body) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body);
        const cap = Math.min(input.preferences.maxVisibleSteps ?? 5, input.preferences.overwhelmSensitive ? 3 : 50);
        expect(out.visible_steps.length).toBeLessThanOrEqual(cap);
        expect(out.visible_steps.length).toBeGreaterThan(0);
        const visible = new Set(out.visible_steps.map((s) => s.id));
        const ms = new Set(out.milestones.map((m) => m.id));
        expect(visible.has(out.first_action.step_id)).toBe(true);
        for (const s of out.visible_steps) expect(ms.has(s.milestone_id)).toBe(true);
        for (const m of out.milestones) for (const id of m.visible_step_ids) expect(visible.has(id)).toBe(true);
        for (const w of out.workspace_sections) for (const id of w.step_ids) expect(visible.has(id)).toBe(true);
        for (const r of out.review_schedule) if (r.milestone_id) expect(ms.has(r.milestone_id)).toBe(true);
        for (const m of out.progress_model.milestone_weights) expect(ms.has(m.milestone_id)).toBe(true);
        expect(out.milestones.reduce((a, m) => a + m.step_count, 0)).toBe(out.progress_model.total_steps);
      }),
      { numRuns: 100 },
    );
  });
});
