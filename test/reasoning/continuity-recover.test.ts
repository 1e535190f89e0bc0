import fc from 'fast-check';
import { continuityRecover as ep, compileContinuityRecover } from '../../reasoning/continuity-recover';
import { itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileContinuityRecover(ep.request.parse(body), {});

describe('continuity/recover golden', () => {
  const out = run(ep.example);
  it('finds where you left off and the time away with luxon', () => {
    expect(out.where_you_left_off).toMatchObject({ event_id: 'ev3', item_id: 'i2', last_action: 'note' });
    expect(out.time_away).toEqual({ minutes: 948, label: '15 h 48 min', basis: 'clock', context_decay: 'cold' });
  });
  it('ranks changes: blocking on your work first, background last', () => {
    expect(out.what_changed.map((c) => [c.id, c.impact])).toEqual([
      ['c2', 'blocking'],
      ['c1', 'relevant'],
      ['c3', 'background'],
    ]);
  });
  it('orders open items and reports blockers', () => {
    expect(out.open_items.map((o) => o.id)).toEqual(['i1', 'i2', 'i3']);
    expect(out.open_items[2]).toMatchObject({ ready: false, blocked_by: ['i1', 'i2'] });
  });
  it('picks the blocking change as the first re-entry action', () => {
    expect(out.first_reentry_action).toMatchObject({ kind: 'review_change', target_id: 'c2' });
    expect(out.recovery_brief).toContain('away 15 h 48 min');
  });
  it('resumes the ready item when nothing blocks and context is fresh', () => {
    const o = run({ ...ep.example, now: '2026-04-27T17:50:00+02:00', changes_since: [] });
    expect(o.time_away.context_decay).toBe('fresh');
    expect(o.first_reentry_action).toMatchObject({ kind: 'resume_item', target_id: 'i1' });
    const none = run({ last_events: [], away_minutes: 30 });
    expect(none.first_reentry_action.kind).toBe('start_fresh');
    expect(none.time_away).toMatchObject({ minutes: 30, basis: 'away_minutes' });
  });
});

describe('continuity/recover request schema', () => {
  it('requires last_events', () => expectRejectsAt(ep.request, { open_items: [] }, 'last_events'));
  it('names bad nested fields', () => {
    expectRejectsAt(ep.request, { last_events: [{ title: 'x' }] }, 'last_events.0.id');
    expectRejectsAt(ep.request, { last_events: [], open_items: [{ id: 'a', progress: 2 }] }, 'open_items.0.progress');
    expectRejectsAt(ep.request, { last_events: [], away_minutes: -1 }, 'away_minutes');
    expectRejectsAt(
      ep.request,
      { last_events: [], changes_since: [{ id: 'c', summary: 'x'.repeat(2001) }] },
      'changes_since.0.summary',
    );
  });
});

describe('continuity/recover properties', () => {
  const id = fc.constantFrom('a', 'b', 'c', 'd');
  const t = fc.oneof(
    fc.integer({ min: 0, max: 72 }).map((h) => new Date(Date.UTC(2026, 3, 27) + h * 3_600_000).toISOString()),
    fc.constant('x'),
  );
  const body = fc.record(
    {
      now: fc.constantFrom('2026-04-30T00:00:00Z', undefined),
      left_at: fc.option(t, { nil: undefined }),
      away_minutes: fc.option(fc.nat(5000), { nil: undefined }),
      last_events: fc.array(
        fc.record(
          {
            id,
            kind: fc.constantFrom('edit', 'run'),
            title: fc.constantFrom('A', 'B'),
            time: t,
            item_id: fc.option(id, { nil: undefined }),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 8 },
      ),
      open_items: fc.array(
        fc.record(
          {
            id,
            status: fc.constantFrom('open', 'done', 'in_progress'),
            progress: fc.double({ min: 0, max: 1, noNaN: true }),
            depends_on: fc.array(fc.constantFrom('a', 'b', 'zz'), { maxLength: 2 }),
            updated_at: t,
            next_step: fc.constantFrom('do it', undefined),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 6 },
      ),
      changes_since: fc.array(
        fc.record(
          {
            id,
            title: fc.constantFrom('CI failed', 'note', 'reverted'),
            time: t,
            item_id: fc.option(id, { nil: undefined }),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 8 },
      ),
      preferences: fc.record({
        max_changes: fc.integer({ min: 1, max: 3 }),
        max_open_items: fc.integer({ min: 1, max: 3 }),
        max_steps: fc.integer({ min: 1, max: 3 }),
      }),
    },
    { requiredKeys: ['last_events'] },
  );
  itCompilesGeneratedBodies(ep, body, (input, out) => {
    const p = input.preferences;
    if (p?.max_changes) expect(out.what_changed.length).toBeLessThanOrEqual(p.max_changes);
    if (p?.max_open_items) expect(out.open_items.length).toBeLessThanOrEqual(p.max_open_items);
    if (p?.max_steps) expect(out.warm_up_steps.length).toBeLessThanOrEqual(p.max_steps);
    const ids = new Set([
      ...input.last_events.flatMap((e) => [e.id, e.item_id ?? e.id]),
      ...(input.open_items ?? []).map((o) => o.id),
      ...(input.changes_since ?? []).flatMap((c) => [c.id, c.item_id ?? c.id]),
    ]);
    const refs = [
      out.where_you_left_off?.event_id,
      out.first_reentry_action.target_id,
      ...out.what_changed.map((c) => c.id),
      ...out.open_items.flatMap((o) => [o.id, ...o.blocked_by]),
      ...out.warm_up_steps.map((s) => s.target_id),
    ].filter((x): x is string => !!x);
    for (const r of refs) expect(ids.has(r)).toBe(true);
  });
});
