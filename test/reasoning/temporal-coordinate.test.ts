import fc from 'fast-check';
import { DateTime } from 'luxon';
import { temporalCoordinate as ep, compileTemporalCoordinate } from '../../reasoning/temporal-coordinate';
import { itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileTemporalCoordinate(ep.request.parse(body), {});
const ms = (s: string) => DateTime.fromISO(s, { setZone: true }).toMillis();

describe('temporal/coordinate golden', () => {
  const out = run(ep.example);
  const block = (id: string) => out.schedule_proposals.find((p) => p.task_id === id)!;

  it('reports the real conflicts', () => {
    const kinds = out.conflicts.map((c) => c.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(['fixed_overlap', 'window_overlaps_fixed', 'unknown_dependency', 'dependency_cycle']),
    );
    expect(out.conflicts.find((c) => c.kind === 'dependency_cycle')!.task_ids).toEqual(['migrate', 'rollout']);
    expect(out.conflicts.find((c) => c.kind === 'fixed_overlap')!.event_indexes).toEqual([1, 2]);
    expect(out.conflicts.find((c) => c.kind === 'unknown_dependency')!.detail).toContain('brand-kit');
  });

  it('places the deep-work task in the high-energy window after the standup buffer', () => {
    expect(block('spec')).toMatchObject({
      window_label: 'morning focus',
      energy_match: 'exact',
      start: '2026-04-27T10:25:00-04:00',
      end: '2026-04-27T11:55:00-04:00',
    });
  });

  it('respects dependencies and keeps cyclic tasks out', () => {
    expect(ms(block('review').start!)).toBeGreaterThanOrEqual(ms(block('spec').end!));
    expect(block('review').depends_on_blocks).toEqual([block('spec').block_id]);
    expect(out.order.indexOf('spec')).toBeLessThan(out.order.indexOf('review'));
    expect(out.unscheduled.map((u) => u.task_id).sort()).toEqual(['migrate', 'rollout']);
    expect(out.order).not.toContain('invoice');
  });

  it('never overlaps a fixed event and buckets by the request clock', () => {
    const fixed = ep.example.fixed_events!.map((e) => [
      ms(e.start!),
      e.end ? ms(e.end) : ms(e.start!) + e.minutes! * 60_000,
    ]);
    for (const p of out.schedule_proposals)
      for (const [s, e] of fixed) expect(ms(p.end!) <= s || ms(p.start!) >= e).toBe(true);
    expect(out.buckets.now.map((b) => b.task_id)).toEqual(['expenses', 'inbox']);
    expect(out.buckets.later.map((b) => b.task_id)).toEqual(['migrate', 'rollout']);
    expect(out.summary.free_minutes).toBe(305);
  });

  it('reports over-commitment and overlong tasks', () => {
    const o = run({
      now: '2026-05-04T09:00:00Z',
      available: [{ start: '2026-05-04T09:00:00Z', end: '2026-05-04T10:00:00Z' }],
      tasks: [
        { id: 'a', minutes: 45 },
        { id: 'b', minutes: 45 },
        { id: 'c', minutes: 120, due_hint: 'today' },
      ],
    });
    const kinds = o.conflicts.map((c) => c.kind);
    expect(kinds).toEqual(expect.arrayContaining(['over_commitment', 'task_too_long', 'due_at_risk']));
    expect(o.schedule_proposals).toHaveLength(1);
  });

  it('honours max_blocks, prefer_short_starts and time zones', () => {
    const o = run({
      timezone: 'Europe/Berlin',
      available: [{ start: '2026-05-04T07:00:00Z', end: '2026-05-04T11:00:00Z' }],
      tasks: [
        { id: 'long', minutes: 120, importance: 'high' },
        { id: 'short', minutes: 15 },
        { id: 'x', minutes: 120 },
        { id: 'y', minutes: 25 },
        { id: 'z', minutes: 10 },
      ],
      preferences: { max_blocks: 3, prefer_short_starts: true },
    });
    expect(o.schedule_proposals.map((p) => [p.task_id, p.start])).toEqual([
      ['short', '2026-05-04T09:00:00+02:00'],
      ['long', '2026-05-04T09:15:00+02:00'],
      ['y', '2026-05-04T11:15:00+02:00'],
    ]);
    expect(o.unscheduled).toEqual([
      { task_id: 'x', reason: 'no free time left before the horizon' },
      { task_id: 'z', reason: 'max_blocks (3) reached' },
    ]);
  });

  it('uses floating windows (minutes only) without clock times', () => {
    const o = run({
      available: [{ label: 'train', minutes: 30, energy: 'low' }],
      tasks: [
        { id: 'read', minutes: 25, energy: 'low' },
        { id: 'big', minutes: 25 },
      ],
    });
    expect(o.schedule_proposals).toEqual([
      expect.objectContaining({ task_id: 'read', start: null, end: null, window_index: 0, energy_match: 'exact' }),
    ]);
    expect(o.conflicts.map((c) => c.kind)).toContain('over_commitment');
  });
});

describe('temporal/coordinate request schema', () => {
  it('tasks default to none (issue 10: optional where a sensible default exists)', () =>
    expect(ep.request.parse({ available: [] }).tasks).toEqual([]));
  it('names bad nested fields', () => {
    expectRejectsAt(ep.request, { tasks: [{ id: 'a', minutes: 'ten' }] }, 'tasks.0.minutes');
    expectRejectsAt(ep.request, { tasks: [{ title: 'no id' }] }, 'tasks.0.id');
    expectRejectsAt(ep.request, { tasks: [], preferences: { max_blocks: 1.5 } }, 'preferences.max_blocks');
    expectRejectsAt(ep.request, { tasks: [], fixed_events: [{ start: 5 }] }, 'fixed_events.0.start');
  });
  it('rejects oversize input', () => {
    expectRejectsAt(ep.request, { tasks: Array.from({ length: 10_001 }, (_, i) => ({ id: `t${i}` })) }, 'tasks');
    expectRejectsAt(ep.request, { tasks: [{ id: 'a', title: 'x'.repeat(501) }] }, 'tasks.0.title');
  });
});

describe('temporal/coordinate properties', () => {
  const day = '2026-05-04';
  const hm = fc.tuple(fc.integer({ min: 6, max: 20 }), fc.constantFrom(0, 15, 30, 45));
  const iso = ([h, m]: [number, number]) =>
    `${day}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00${h % 2 ? 'Z' : '+02:00'}`;
  const range = fc.tuple(hm, fc.integer({ min: -30, max: 240 })).map(([a, len]) => {
    const s = DateTime.fromISO(iso(a), { setZone: true });
    return { start: iso(a), end: s.plus({ minutes: len }).toISO()! };
  });
  const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const body = fc.record(
    {
      now: fc.constantFrom(`${day}T08:00:00Z`, 'garbage', undefined),
      horizon: fc.constantFrom('today', '2 days', 'week', '2026-05-04', 'soon'),
      timezone: fc.constantFrom('UTC', 'Asia/Tokyo', 'Not/AZone'),
      energy: fc.constantFrom('low', 'high', 'meh'),
      available: fc.array(
        fc.oneof(
          range.map((r) => ({ ...r, energy: 'high' })),
          fc.record({ minutes: fc.integer({ min: 0, max: 120 }) }),
          fc.constant({ start: 'bad' }),
        ),
        { maxLength: 5 },
      ),
      fixed_events: fc.array(
        fc.oneof(
          range.map((r) => ({ ...r, title: 'ev' })),
          fc.record({ start: fc.constant(`${day}T12:00:00Z`), minutes: fc.integer({ min: 0, max: 90 }) }),
        ),
        { maxLength: 5 },
      ),
      tasks: fc.array(
        fc.record(
          {
            id: fc.constantFrom(...ids),
            minutes: fc.integer({ min: 0, max: 200 }),
            energy: fc.constantFrom('low', 'medium', 'high'),
            importance: fc.oneof(fc.constantFrom('low', 'high', 'critical', '7'), fc.integer({ min: 0, max: 10 })),
            status: fc.constantFrom('todo', 'done', 'blocked', 'in_progress'),
            due_hint: fc.constantFrom('today', 'Friday', '2026-05-04', 'whenever', 'in 2 hours'),
            dependencies: fc.array(fc.constantFrom(...ids, 'zz'), { maxLength: 3 }),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 12 },
      ),
      preferences: fc.record({
        max_blocks: fc.integer({ min: 1, max: 6 }),
        protect_focus: fc.boolean(),
        prefer_short_starts: fc.boolean(),
        max_conflicts: fc.integer({ min: 1, max: 8 }),
      }),
    },
    { requiredKeys: ['tasks'] },
  );

  itCompilesGeneratedBodies(ep, body, (input, out) => {
    const p = input.preferences;
    if (p?.max_blocks) expect(out.schedule_proposals.length).toBeLessThanOrEqual(p.max_blocks);
    if (p?.max_conflicts) expect(out.conflicts.length).toBeLessThanOrEqual(p.max_conflicts);
    const taskIds = new Set(input.tasks.map((t) => t.id));
    const blocks = new Map(out.schedule_proposals.map((x) => [x.block_id, x]));
    for (const x of out.schedule_proposals) {
      expect(taskIds.has(x.task_id)).toBe(true);
      if (x.window_index !== null) expect(x.window_index).toBeLessThan(input.available?.length ?? 0);
      for (const d of x.depends_on_blocks) {
        const dep = blocks.get(d)!;
        expect(dep).toBeDefined();
        if (dep.end && x.start) expect(ms(x.start)).toBeGreaterThanOrEqual(ms(dep.end));
      }
    }
    const timed = out.schedule_proposals
      .filter((x) => x.start)
      .map((x) => [ms(x.start!), ms(x.end!)])
      .sort((a, c) => a[0] - c[0]);
    for (let k = 1; k < timed.length; k++) expect(timed[k][0]).toBeGreaterThanOrEqual(timed[k - 1][1]);
    for (const c of out.conflicts) {
      c.task_ids.forEach((id) => expect(taskIds.has(id)).toBe(true));
      c.event_indexes.forEach((i) => expect(i).toBeLessThan(input.fixed_events?.length ?? 0));
      c.window_indexes.forEach((i) => expect(i).toBeLessThan(input.available?.length ?? 0));
    }
    for (const id of [...out.order, ...out.unscheduled.map((u) => u.task_id)]) expect(taskIds.has(id)).toBe(true);
  });
});
