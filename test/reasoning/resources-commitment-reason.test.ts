import fc from 'fast-check';
import { resourcesCommitmentReason as ep } from '../../reasoning/resources-commitment-reason';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /resources/commitment/reason', () => {
  test('golden: over-commitment, dated breach, feasible subset, trade-offs', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    expect(out.over_commitment.resource_ids).toEqual(['team-hours', 'designer']);
    expect(out.utilization.find((u) => u.resource_id === 'team-hours')).toMatchObject({ demanded: 135, over_by: 15 });
    // 120 h accrue over May 4-29 (New York): by May 20 only 76.8 h exist, but rebrand + launch need 100
    expect(out.over_commitment.by_date).toEqual([
      {
        resource_id: 'team-hours',
        commitment_id: 'launch',
        due: '2026-05-20T00:00:00-04:00',
        cumulative_demand: 100,
        available_by_then: 76.8,
      },
    ]);
    expect(out.feasible_subset.kept.map((k) => k.commitment_id)).toEqual(['launch', 'conference', 'blog']);
    expect(out.feasible_subset.deferred).toEqual([{ commitment_id: 'rebrand', blocking_resource_ids: ['designer'] }]);
    expect(out.trade_offs[0]).toMatchObject({
      commitment_id: 'rebrand',
      kind: 'add_capacity',
      resource_changes: [{ resource_id: 'designer', amount: 15 }],
    });
  });

  test('a denormal capacity is "no usable capacity", not an Infinity the response schema rejects (found by the mutation property)', () => {
    const ex = ep.example as { resources: { id: string; capacity: number }[] };
    const body = { ...ex, resources: ex.resources.map((r, i) => (i === 0 ? { ...r, capacity: 5e-324 } : r)) };
    const out = expectCompilesCleanly(ep, ep.request.parse(body));
    expect(out.utilization.find((u) => u.resource_id === ex.resources[0].id)!.utilization).toBe(999);
  });

  test('must_keep goes first, equal-priority swaps and added capacity are offered', () => {
    const out = run({
      now: '2026-06-01T00:00:00Z',
      resources: [{ id: 'h', capacity: 10 }],
      commitments: [
        { id: 'low1', priority: 1, demands: [{ resource_id: 'h', amount: 4 }] },
        { id: 'pinned', priority: 0, must_keep: true, demands: [{ resource_id: 'h', amount: 3 }] },
        {
          id: 'big',
          priority: 5,
          due: '2026-05-01',
          demands: [
            { resource_id: 'h', amount: 8 },
            { resource_id: 'ghost', amount: 1 },
          ],
        },
        { id: 'pinned2', must_keep: true, demands: [{ resource_id: 'h', amount: 9 }] },
      ],
    });
    // must_keep first (pinned2 is forced past capacity), then by priority
    expect(out.feasible_subset.kept).toEqual([
      { commitment_id: 'pinned', forced: false },
      { commitment_id: 'pinned2', forced: true },
    ]);
    expect(out.feasible_subset.deferred.map((d) => d.commitment_id)).toEqual(['big', 'low1']);
    expect(out.trade_offs.every((t) => t.kind === 'add_capacity')).toBe(true); // must_keep is never dropped
    expect(out.over_commitment.past_due).toEqual(['big']);
    expect(out.warnings).toContain('demand on undeclared resource "ghost" ignored');
    const swap = run({
      resources: [{ id: 'h', capacity: 10, unit: 'h' }],
      commitments: [
        { id: 'b', priority: 2, due: '2026-05-20', demands: [{ resource_id: 'h', amount: 6 }] },
        { id: 'a', priority: 2, due: '2026-05-10', demands: [{ resource_id: 'h', amount: 6 }] },
        { id: 'top', priority: 3, demands: [{ resource_id: 'h', amount: 3 }] },
      ],
    });
    expect(swap.feasible_subset.kept.map((k) => k.commitment_id)).toEqual(['top', 'a']);
    expect(swap.trade_offs).toEqual([
      expect.objectContaining({
        commitment_id: 'b',
        kind: 'drop_commitments',
        drop_ids: ['a'],
        resource_changes: [{ resource_id: 'h', amount: 6 }],
      }),
      expect.objectContaining({
        commitment_id: 'b',
        kind: 'add_capacity',
        resource_changes: [{ resource_id: 'h', amount: 5 }],
      }),
    ]);
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, { commitments: [{ id: 'c', demands: [] }] }, 'resources');
    expectRejectsAt(ep.request, { resources: [{ id: 'r', capacity: 1 }] }, 'commitments');
    expectRejectsAt(
      ep.request,
      { resources: [{ id: 'r', capacity: -1 }], commitments: [{ id: 'c', demands: [] }] },
      'resources.0.capacity',
    );
    expectRejectsAt(
      ep.request,
      { resources: [{ id: 'r', capacity: 1 }], commitments: [{ id: 'c' }] },
      'commitments.0.demands',
    );
    expectRejectsAt(
      ep.request,
      {
        resources: [{ id: 'r', capacity: 1 }],
        commitments: [{ id: 'c', demands: [{ resource_id: 'r', amount: 'x' }] }],
      },
      'commitments.0.demands.0.amount',
    );
  });

  const R = ['r1', 'r2', 'r3'];
  const res = fc.record(
    {
      id: fc.constantFrom(...R),
      capacity: fc.integer({ min: 0, max: 50 }),
      period_start: fc.constantFrom('2026-05-01', 'bad'),
      period_end: fc.constantFrom('2026-05-31', '2026-04-01'),
    },
    { requiredKeys: ['id', 'capacity'] },
  );
  const com = fc.record(
    {
      id: fc.constantFrom('c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'),
      priority: fc.integer({ min: 0, max: 4 }),
      due: fc.constantFrom('2026-05-10', '2026-05-30T12:00:00Z', 'nope'),
      must_keep: fc.boolean(),
      demands: fc.array(
        fc.record({ resource_id: fc.constantFrom(...R, 'zz'), amount: fc.integer({ min: 0, max: 30 }) }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ['id', 'demands'] },
  );
  test('properties: total, deterministic, valid, capped, consistent', () => {
    fc.assert(
      fc.property(
        fc.array(res, { minLength: 1, maxLength: 3 }),
        fc.array(com, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        (resources, commitments, max_tradeoffs) => {
          const input = ep.request.parse({
            resources,
            commitments,
            now: '2026-05-15T00:00:00Z',
            preferences: { max_tradeoffs },
          });
          const out = expectCompilesCleanly(ep, input);
          expect(out.trade_offs.length).toBeLessThanOrEqual(max_tradeoffs);
          const cIds = new Set<string>(commitments.map((c) => c.id));
          const rIds = new Set<string>(resources.map((r) => r.id));
          const kept = out.feasible_subset.kept.map((k) => k.commitment_id);
          const deferred = out.feasible_subset.deferred.map((d) => d.commitment_id);
          expect(new Set([...kept, ...deferred]).size).toBe(kept.length + deferred.length);
          expect(kept.length + deferred.length).toBe(cIds.size);
          for (const t of out.trade_offs) {
            expect(deferred).toContain(t.commitment_id);
            for (const d of t.drop_ids) expect(kept).toContain(d);
            for (const rc of t.resource_changes) expect(rIds.has(rc.resource_id)).toBe(true);
          }
          for (const b of out.over_commitment.by_date)
            expect(cIds.has(b.commitment_id) && rIds.has(b.resource_id)).toBe(true);
          // without forced keeps, the kept subset fits every capacity
          if (out.feasible_subset.kept.every((k) => !k.forced))
            for (const r of out.feasible_subset.remaining) expect(r.amount).toBeGreaterThanOrEqual(-1e-6);
        },
      ),
      { numRuns: 100 },
    );
  });
});
