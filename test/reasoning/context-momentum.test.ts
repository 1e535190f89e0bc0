import fc from 'fast-check';
import { contextMomentum as ep } from '../../reasoning/context-momentum';
import { MAX_ITEMS } from '../../schema/reasoning/common';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('context/momentum golden example', () => {
  const out = run(ep.example);
  it('buckets items by status, project, energy and time', () => {
    expect(out.actionability_buckets.done).toEqual(['i6']);
    expect(out.actionability_buckets.blocked).toEqual(['i3']);
    expect(out.actionability_buckets.parked).toEqual(['i5']); // another project
    expect(out.actionability_buckets.ready_now).toContain('i1');
    expect(out.actionability_buckets.needs_more_energy).toContain('i2'); // 2-hour drawing on low energy
  });
  it('builds at most max_packets packets, current project first, resuming the in-progress item', () => {
    expect(out.future_self_packets).toHaveLength(2);
    expect(out.future_self_packets[0].project).toBe('Garden shed');
    expect(out.future_self_packets[0].resume_cue).toMatch(/^Pick up where you left off: Draft the shed floor plan/);
    expect(out.future_self_packets.flatMap((p) => p.item_ids)).not.toContain('i3');
  });
  it('picks moves that fit the time and keeps one stepping stone', () => {
    expect(out.next_moves.five_minute).toMatchObject({ item_id: 'i1', minutes: 5 });
    expect(out.next_moves.thirty_minute!.minutes).toBeLessThanOrEqual(25);
    expect(out.next_moves.thirty_minute!.item_id).not.toBe('i1');
    expect(out.preserved_stepping_stone!.item_id).toBe('i2');
  });
  it('returns no moves when no time is available', () => {
    const o = run({ ...ep.example, available_minutes: 0 });
    expect(o.next_moves).toEqual({ five_minute: null, thirty_minute: null });
  });
});

describe('context/momentum request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, {}, 'items');
    expectRejectsAt(ep.request, { items: [{ id: 'a' }] }, 'items.0.title');
    expectRejectsAt(ep.request, { items: [{ id: 'a', title: 't', tags: 'x' }] }, 'items.0.tags');
    expectRejectsAt(ep.request, { items: [{ id: 'a', title: 't' }], available_minutes: 1.5 }, 'available_minutes');
    expectRejectsAt(
      ep.request,
      { items: [{ id: 'a', title: 't' }], preferences: { max_packets: 0 } },
      'preferences.max_packets',
    );
    expectRejectsAt(
      ep.request,
      { items: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => ({ id: `i${i}`, title: 't' })) },
      'items',
    );
  });
});

const itemArb = fc.record({
  id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'),
  title: fc.constantFrom('Write report', 'Read paper', 'Email Jo', 'Idea: garden', 'Fix bug 3h'),
  content: fc.option(fc.constantFrom('10 min', 'long text '.repeat(30), ''), { nil: undefined }),
  kind: fc.option(fc.constantFrom('task', 'idea', 'note'), { nil: undefined }),
  project_hint: fc.option(fc.constantFrom('Alpha', 'Beta', 'alpha project'), { nil: undefined }),
  status: fc.option(fc.constantFrom('open', 'in_progress', 'blocked', 'done', 'x'), { nil: undefined }),
  tags: fc.option(fc.array(fc.constantFrom('alpha', 'beta'), { maxLength: 2 }), { nil: undefined }),
});
const reqArb = fc.record({
  current_project: fc.option(fc.constantFrom('Alpha', 'Gamma'), { nil: undefined }),
  available_minutes: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
  user_state: fc.record({ energy: fc.constantFrom('low', 'high', 'meh') }, { requiredKeys: [] }),
  preferences: fc.record(
    { max_packets: fc.integer({ min: 1, max: 4 }), overwhelm_sensitive: fc.boolean(), preserve_novelty: fc.boolean() },
    { requiredKeys: [] },
  ),
  items: fc.array(itemArb, { minLength: 1, maxLength: 12 }),
});

describe('context/momentum properties', () => {
  it('never throws, is deterministic, honours caps and references real items', () => {
    fc.assert(
      fc.property(reqArb, (body) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body);
        const cap = Math.min(input.preferences.max_packets ?? 3, input.preferences.overwhelm_sensitive ? 2 : 100);
        expect(out.future_self_packets.length).toBeLessThanOrEqual(cap);
        const ids = new Set(input.items.map((i) => i.id));
        const all = Object.values(out.actionability_buckets).flat();
        expect(new Set(all).size).toBe(ids.size); // every distinct item in exactly one bucket
        for (const id of [
          ...all,
          ...out.future_self_packets.flatMap((p) => p.item_ids),
          ...out.memory_seeds.flatMap((m) => m.item_ids),
        ])
          expect(ids.has(id)).toBe(true);
        const avail = input.available_minutes ?? 30;
        for (const [m, box] of [
          [out.next_moves.five_minute, 5],
          [out.next_moves.thirty_minute, 30],
        ] as const)
          if (m) {
            expect(ids.has(m.item_id)).toBe(true);
            expect(m.minutes).toBeLessThanOrEqual(Math.min(box, avail));
          }
        if (out.preserved_stepping_stone) expect(ids.has(out.preserved_stepping_stone.item_id)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
