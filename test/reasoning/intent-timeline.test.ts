import fc from 'fast-check';
import { intentTimeline as ep, compileIntentTimeline } from '../../reasoning/intent-timeline';
import { itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileIntentTimeline(ep.request.parse(body), {});

describe('intent/timeline golden', () => {
  const out = run(ep.example);
  it('orders events into intent phases, inferring intents from text', () => {
    expect(out.phases.map((p) => [p.id, p.intent, p.event_ids])).toEqual([
      ['ph1', 'create', ['e1', 'e2']],
      ['ph2', 'research', ['e3', 'e4']],
      ['ph3', 'communicate', ['e5']],
      ['ph4', 'create', ['e6']],
      ['ph5', 'create', ['e7']],
    ]);
    expect(out.phases[0]).toMatchObject({ dwell_minutes: 25, start: '2026-04-27T09:00:00+02:00', inferred_share: 0.5 });
    expect(out.unplaced_event_ids).toEqual(['e8']);
  });
  it('classifies transitions and measures drift', () => {
    expect(out.transitions.map((t) => t.kind)).toEqual(['switch', 'switch', 'return', 'gap_resume']);
    expect(out.transitions[3].gap_minutes).toBe(75);
    expect(out.dwell_by_intent[0]).toEqual({ intent: 'create', minutes: 35, share: 0.58, phases: 3 });
    expect(out.drift).toMatchObject({
      goal_intent: 'create',
      basis: 'given',
      on_goal_share: 0.58,
      trend: 'converging',
      off_goal_phase_ids: ['ph2', 'ph3'],
    });
  });
  it('keeps the most recent max_phases and only references kept phases', () => {
    const o = run({ ...ep.example, preferences: { max_phases: 2 } });
    expect(o.phases.map((p) => p.id)).toEqual(['ph4', 'ph5']);
    expect(o.transitions).toEqual([expect.objectContaining({ from_phase: 'ph4', to_phase: 'ph5' })]);
    expect(o.summary.phases_total).toBe(5);
  });
  it('infers nothing from words that name built-in object properties (__proto__, constructor)', () => {
    const o = run({
      events: [
        { id: 'a', time: '2026-07-01T09:00:00Z', text: '__proto__' },
        { id: 'b', time: '2026-07-01T09:10:00Z', text: 'constructor toString' },
      ],
    });
    expect(o.phases.map((p) => p.intent)).toEqual(['unknown']);
    expect(ep.response.safeParse(o).success).toBe(true);
  });
  it('reads times without offset in the given zone', () => {
    const o = run({ timezone: 'America/New_York', events: [{ id: 'a', time: '2026-07-01T09:00', intent: 'Plan' }] });
    expect(o.phases[0]).toMatchObject({ intent: 'plan', start: '2026-07-01T09:00:00-04:00' });
    expect(o.drift.basis).toBe('dominant');
  });
});

describe('intent/timeline request schema', () => {
  it('requires events with times', () => {
    expectRejectsAt(ep.request, {}, 'events');
    expectRejectsAt(ep.request, { events: [{ id: 'a' }] }, 'events.0.time');
  });
  it('names bad fields', () => {
    expectRejectsAt(ep.request, { events: [{ id: 'a', time: 't', confidence: 3 }] }, 'events.0.confidence');
    expectRejectsAt(ep.request, { events: [], preferences: { gap_minutes: 0 } }, 'preferences.gap_minutes');
  });
});

describe('intent/timeline properties', () => {
  const body = fc.record(
    {
      goal_intent: fc.constantFrom('create', 'Research', undefined),
      timezone: fc.constantFrom('UTC', 'Asia/Kolkata', 'Bad/Zone'),
      events: fc.array(
        fc.record(
          {
            id: fc.string({ minLength: 1, maxLength: 4 }),
            time: fc.oneof(
              fc.integer({ min: 0, max: 600 }).map((m) => new Date(Date.UTC(2026, 3, 27) + m * 60_000).toISOString()),
              fc.constant('nah'),
            ),
            intent: fc.option(fc.constantFrom('create', 'research', 'plan'), { nil: undefined }),
            text: fc.constantFrom('write code', 'search docs', 'email Bob', 'hmm', ''),
            confidence: fc.double({ min: 0, max: 1, noNaN: true }),
          },
          { requiredKeys: ['id', 'time'] },
        ),
        { maxLength: 30 },
      ),
      preferences: fc.record({
        max_phases: fc.integer({ min: 1, max: 6 }),
        gap_minutes: fc.integer({ min: 1, max: 90 }),
        tail_minutes: fc.integer({ min: 0, max: 10 }),
      }),
    },
    { requiredKeys: ['events'] },
  );
  itCompilesGeneratedBodies(ep, body, (input, out) => {
    expect(out.phases.length).toBeLessThanOrEqual(input.preferences?.max_phases ?? 20);
    const ids = new Set(input.events.map((e) => e.id));
    const phaseIds = new Set(out.phases.map((p) => p.id));
    out.phases.forEach((p) => p.event_ids.forEach((id) => expect(ids.has(id)).toBe(true)));
    out.unplaced_event_ids.forEach((id) => expect(ids.has(id)).toBe(true));
    for (const t of out.transitions) {
      expect(phaseIds.has(t.from_phase) && phaseIds.has(t.to_phase)).toBe(true);
      expect(t.gap_minutes).toBeGreaterThanOrEqual(0);
    }
    out.drift.off_goal_phase_ids.forEach((id) => expect(phaseIds.has(id)).toBe(true));
    const share = out.dwell_by_intent.reduce((a, d) => a + d.share, 0);
    if (out.dwell_by_intent.some((d) => d.minutes > 0))
      expect(Math.abs(share - 1)).toBeLessThan(0.05 * out.dwell_by_intent.length);
  });
});
