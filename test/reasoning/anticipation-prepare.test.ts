import fc from 'fast-check';
import { anticipationPrepare as ep } from '../../reasoning/anticipation-prepare';
import { MAX_ITEMS } from '../../schema/reasoning/common';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('anticipation/prepare golden example', () => {
  const out = run(ep.example);
  const pitch = out.packets.find((p) => p.event_id === 'ev-pitch')!;
  it('ranks the critical pitch first with zone-aware prepare-by time', () => {
    expect(out.packets[0].event_id).toBe('ev-pitch');
    expect(pitch.starts_at).toBe('2026-06-08T14:00:00+01:00'); // British Summer Time
    expect(pitch.lead_minutes).toBe(330);
    expect(pitch.prepare_by).toBe('2026-06-08T12:25:00+01:00'); // 80 min prep + 15 min buffer
    expect(pitch.urgency).toBe('today');
  });
  it('attaches matching context and open questions', () => {
    expect(pitch.context_item_ids).toEqual(['doc-deck', 'doc-churn']);
    expect(pitch.open_questions).toEqual(['Will they ask about churn?']);
    expect(out.packets.find((p) => p.event_id === 'ev-1on1')!.context_item_ids).toEqual(['note-sam']);
  });
  it('reports the overlap and skips past and far events', () => {
    expect(out.conflicts).toEqual([{ event_ids: ['ev-pitch', 'ev-1on1'], overlap_minutes: 30 }]);
    expect(out.skipped).toEqual([
      { event_id: 'ev-past', reason: 'already_started' },
      { event_id: 'ev-far', reason: 'beyond_horizon' },
    ]);
  });
  it('honours max_packets and says what was cut', () => {
    const o = run({ ...ep.example, preferences: { max_packets: 1 } });
    expect(o.packets).toHaveLength(1);
    expect(o.skipped.filter((s) => s.reason === 'over_packet_cap')).toHaveLength(2);
  });
});

describe('anticipation/prepare request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, { events: [{ id: 'e', title: 't', start: '2026-01-01T10:00' }] }, 'now');
    expectRejectsAt(ep.request, { now: '2026-01-01T09:00' }, 'events');
    expectRejectsAt(ep.request, { now: 'x', events: [{ id: 'e', title: 't' }] }, 'events.0.start');
    expectRejectsAt(
      ep.request,
      { now: 'x', events: [{ id: 'e', title: 't', start: 's', prep_minutes: -1 }] },
      'events.0.prep_minutes',
    );
    expectRejectsAt(
      ep.request,
      { now: 'x', events: [{ id: 'e', title: 't', start: 's' }], context_items: [{ id: 'c' }] },
      'context_items.0.title',
    );
    expectRejectsAt(
      ep.request,
      { now: 'x', events: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => ({ id: `e${i}`, title: 't', start: 's' })) },
      'events',
    );
  });
});

const eventArb = fc.record({
  id: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  title: fc.constantFrom('Pitch deck review', 'Call with Bo', 'Dentist', 'Demo day'),
  start: fc.constantFrom(
    '2026-03-29T00:30:00',
    '2026-03-29T03:00:00',
    '2026-03-30T10:00:00+02:00',
    '2026-04-20T10:00:00',
    'nonsense',
    '2026-03-28T09:00:00',
  ),
  end: fc.option(fc.constantFrom('2026-03-29T02:00:00', '2026-03-30T11:00:00', 'bad'), { nil: undefined }),
  importance: fc.option(fc.constantFrom('low', 'critical', '5', '0', 'meh'), { nil: undefined }),
  attendees: fc.option(fc.array(fc.constantFrom('Bo', 'Ana'), { maxLength: 2 }), { nil: undefined }),
  location: fc.option(fc.constantFrom('HQ'), { nil: undefined }),
  prep_minutes: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }),
  tags: fc.option(fc.array(fc.constantFrom('x', 'y'), { maxLength: 2 }), { nil: undefined }),
  notes: fc.option(fc.constantFrom('Why now? Bring deck.', ''), { nil: undefined }),
});
const reqArb = fc.record({
  now: fc.constantFrom('2026-03-28T22:00:00', '2026-03-29T01:30:00+01:00', 'garbage'),
  timezone: fc.option(fc.constantFrom('Europe/Berlin', 'America/Chicago', 'Bad/Zone'), { nil: undefined }),
  events: fc.array(eventArb, { minLength: 1, maxLength: 8 }),
  context_items: fc.array(
    fc.record({
      id: fc.constantFrom('c1', 'c2', 'c3'),
      title: fc.constantFrom('Deck notes', 'Bo history', 'Random'),
      tags: fc.option(fc.array(fc.constantFrom('x', 'y')), { nil: undefined }),
    }),
    { maxLength: 5 },
  ),
  preferences: fc.record(
    {
      max_packets: fc.integer({ min: 1, max: 4 }),
      horizon_hours: fc.integer({ min: 1, max: 2000 }),
      max_items_per_packet: fc.integer({ min: 1, max: 2 }),
    },
    { requiredKeys: [] },
  ),
});

describe('anticipation/prepare properties', () => {
  it('never throws, is deterministic, honours caps and keeps references valid', () => {
    fc.assert(
      fc.property(reqArb, (body) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body);
        expect(out.packets.length).toBeLessThanOrEqual(input.preferences.max_packets ?? 5);
        const events = new Set(input.events.map((e) => e.id));
        const ctx = new Set(input.context_items.map((c) => c.id));
        for (const pk of out.packets) {
          expect(events.has(pk.event_id)).toBe(true);
          expect(pk.context_item_ids.length).toBeLessThanOrEqual(input.preferences.max_items_per_packet ?? 5);
          for (const c of pk.context_item_ids) expect(ctx.has(c)).toBe(true);
          expect(pk.lead_minutes).toBeGreaterThan(0);
          expect(Date.parse(pk.prepare_by)).toBeLessThan(Date.parse(pk.starts_at));
        }
        for (let i = 1; i < out.packets.length; i++)
          expect(out.packets[i].score).toBeLessThanOrEqual(out.packets[i - 1].score);
        for (const c of out.conflicts) for (const e of c.event_ids) expect(events.has(e)).toBe(true);
        for (const s of out.skipped) expect(events.has(s.event_id)).toBe(true);
        expect(out.packets.length + out.skipped.length).toBe(input.events.length);
      }),
      { numRuns: 100 },
    );
  });
});
