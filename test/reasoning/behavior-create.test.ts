import fc from 'fast-check';
import { behaviorCreate as ep } from '../../reasoning/behavior-create';
import { parseInstant, resolveZone } from '../../reasoning/lib/luxon-time';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown, surface?: string) => ep.compile(ep.request.parse(body), { surface });

describe('behavior/create golden examples', () => {
  it('parses a weekday habit into an RRULE and zone-correct occurrences across DST', () => {
    const out = run(ep.example);
    const tc = out.temporal_contract;
    expect(tc.rrule).toBe('FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=15');
    expect(tc.duration_minutes).toBe(10);
    // Friday 27 March 20:00 -> next weekday is Monday 30 March, after the switch to summer time
    expect(tc.next_occurrences[0]).toBe('2026-03-30T07:15:00+02:00');
    expect(tc.next_occurrences).toHaveLength(5);
    expect(out.initial_state).toMatchObject({
      status: 'active',
      streak: 0,
      period_target: 5,
      next_due_at: '2026-03-30T07:15:00+02:00',
    });
    expect(out.feedback_model.channel).toBe('push notification');
    expect(out.recovery_policy.kind).toBe('grace');
  });
  it('resolves a todo due date against now', () => {
    const out = run({
      type: 'todo',
      title: 'Send the tax forms by Friday',
      now: '2026-03-25T10:00:00',
      timezone: 'Europe/Berlin',
    });
    expect(out.temporal_contract.kind).toBe('one_off');
    expect(out.temporal_contract.rrule).toBeNull();
    expect(out.temporal_contract.due).toEqual({ hint: 'by Friday', at: '2026-03-27T23:59:59+01:00' });
    expect(out.integration_hints.some((h) => h.kind === 'task')).toBe(true);
  });
  it('spreads "3 times a week" and shares a shared goal with its participants', () => {
    const out = run({
      type: 'shared_goal',
      title: 'Run together',
      cadence: '3 times a week evenings',
      participants: ['ana', 'bo', 'ana'],
      now: '2026-03-25T10:00:00',
      timezone: 'UTC',
    });
    expect(out.temporal_contract.by_weekday).toEqual(['MO', 'WE', 'FR']);
    expect(out.temporal_contract.times_of_day).toEqual(['19:00']);
    expect(out.initial_state.participants).toEqual(['ana', 'bo']);
    expect(out.initial_state.privacy).toBe('shared');
    expect(out.recovery_policy.kind).toBe('pause');
  });
  it('lists no occurrences without a clock', () => {
    const out = run({ type: 'daily', title: 'Journal', cadence: 'every 2 days at 21:30' });
    expect(out.temporal_contract.rrule).toBe('FREQ=DAILY;INTERVAL=2;BYHOUR=21;BYMINUTE=30');
    expect(out.temporal_contract.next_occurrences).toEqual([]);
    expect(out.initial_state.status).toBe('not_started');
  });
});

describe('behavior/create request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, { title: 'x' }, 'type');
    expectRejectsAt(ep.request, { type: 'weekly', title: 'x' }, 'type');
    expectRejectsAt(ep.request, { type: 'habit' }, 'title');
    expectRejectsAt(ep.request, { type: 'habit', title: 'x', cadence: 7 }, 'cadence');
    expectRejectsAt(ep.request, { type: 'habit', title: 'x', participants: Array(51).fill('p') }, 'participants');
    expectRejectsAt(
      ep.request,
      { type: 'habit', title: 'x', preferences: { max_occurrences: 61 } },
      'preferences.max_occurrences',
    );
  });
});

const reqArb = fc.record({
  type: fc.constantFrom('daily', 'habit', 'todo', 'goal', 'shared_goal'),
  title: fc.oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.constantFrom('Pay rent by 2026-04-01', 'Call mum tomorrow'),
  ),
  cadence: fc.option(
    fc
      .array(
        fc.constantFrom(
          'every',
          'other',
          'day',
          'week',
          'month',
          '3',
          'times',
          'a',
          'twice',
          'weekdays',
          'mon',
          'fri',
          'at',
          '7',
          '7pm',
          '12am',
          '25:99',
          'morning',
          'for 10 minutes',
          'in 3 days',
          'monthly',
        ),
        { maxLength: 8 },
      )
      .map((w) => w.join(' ')),
    { nil: undefined },
  ),
  reinforcement_mode: fc.option(fc.constantFrom('streak', 'points', 'social', 'x'), { nil: undefined }),
  stakes: fc.option(fc.constantFrom('high', 'low', 'public bet'), { nil: undefined }),
  recovery_policy: fc.option(fc.constantFrom('reset', 'shrink', 'catch-up', 'zzz'), { nil: undefined }),
  participants: fc.option(fc.array(fc.constantFrom('a', 'b'), { maxLength: 4 }), { nil: undefined }),
  now: fc.option(fc.constantFrom('2026-10-24T23:30:00', '2026-01-31T12:00:00+05:00', 'bad'), { nil: undefined }),
  timezone: fc.option(fc.constantFrom('Europe/London', 'Asia/Kolkata', 'Nope/Nope'), { nil: undefined }),
  preferences: fc.record({ max_occurrences: fc.integer({ min: 1, max: 60 }) }, { requiredKeys: [] }),
});

describe('behavior/create properties', () => {
  it('never throws, is deterministic, honours the occurrence cap and orders occurrences', () => {
    fc.assert(
      fc.property(reqArb, fc.option(fc.constantFrom('chat', 'mobile'), { nil: undefined }), (body, surface) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body, { surface });
        const occ = out.temporal_contract.next_occurrences;
        expect(occ.length).toBeLessThanOrEqual(input.preferences.max_occurrences ?? 5);
        const ms = occ.map((o) => Date.parse(o));
        for (let i = 1; i < ms.length; i++) expect(ms[i]).toBeGreaterThan(ms[i - 1]);
        const now = parseInstant(input.now, resolveZone(input.timezone));
        if (ms.length && now) expect(ms[0]).toBeGreaterThan(now.toMillis());
        expect(
          out.initial_state.next_due_at === null ||
            occ.includes(out.initial_state.next_due_at) ||
            out.initial_state.next_due_at === out.temporal_contract.due?.at,
        ).toBe(true);
        for (const p of out.initial_state.participants) expect(input.participants).toContain(p);
      }),
      { numRuns: 100 },
    );
  });
});
