import fc from 'fast-check';
import { workgraphCompile as ep } from '../../reasoning/workgraph-compile';
import { nowArb, workItemsArb } from './workgraph-arbitraries';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /workgraph/compile', () => {
  test('golden: critical path, blocked items, lateness and load', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    expect(out.critical_path).toEqual({
      item_ids: ['schema', 'api', 'e2e', 'launch'],
      total_hours: 30,
      forecast_finish: '2026-05-09T09:00:00+02:00',
    });
    expect(out.ready_items).toEqual(['schema', 'ui']);
    const blocked = Object.fromEntries(out.blocked_items.map((b) => [b.id, b.reasons]));
    expect(blocked.launch).toEqual([
      { kind: 'open_dependency', refs: ['e2e'] },
      { kind: 'missing_dependency', refs: ['legal-review'] },
    ]);
    expect(blocked.docs).toEqual([{ kind: 'status_blocked', refs: [] }]);
    expect(out.late_items.map((l) => [l.id, l.late])).toEqual([
      ['docs', 'overdue'],
      ['api', 'at_risk'],
    ]);
    const ui = out.nodes.find((x) => x.id === 'ui')!;
    expect(ui.slack_hours).toBe(12);
    expect(ui.critical).toBe(false);
    expect(out.owner_load[0]).toMatchObject({ owner: 'ben', open_hours: 22, open_items: 2 });
    expect(out.edges).toContainEqual({ from: 'ui', to: 'e2e' });
  });

  test('cycles and max_nodes keep critical work', () => {
    const out = run({ items: [{ id: 'a', depends_on: ['b'] }, { id: 'b', depends_on: ['a'] }, { id: 'c' }] });
    expect(out.cycles).toEqual([['a', 'b']]);
    expect(out.blocked_items.find((b) => b.id === 'a')!.reasons.map((r) => r.kind)).toContain('dependency_cycle');
    const small = run({ ...ep.example, preferences: { max_nodes: 3 } });
    expect(small.nodes.map((x) => x.id)).toEqual(['schema', 'api', 'e2e']);
    expect(small.truncated).toBe(true);
    expect(small.omitted_nodes).toBe(4);
    const noClock = run({ items: [{ id: 'x', due: '2020-01-01' }] });
    expect(noClock.late_items).toEqual([]);
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, {}, 'items');
    expectRejectsAt(ep.request, { items: [] }, 'items');
    expectRejectsAt(ep.request, { items: [{ title: 'no id' }] }, 'items.0.id');
    expectRejectsAt(ep.request, { items: [{ id: 'a', estimate_hours: 'lots' }] }, 'items.0.estimate_hours');
    expectRejectsAt(ep.request, { items: [{ id: 'a', depends_on: [1] }] }, 'items.0.depends_on.0');
    expectRejectsAt(ep.request, { items: [{ id: 'a' }], preferences: { max_nodes: -1 } }, 'preferences.max_nodes');
  });

  test('properties: total, deterministic, valid, capped, referentially closed', () => {
    fc.assert(
      fc.property(workItemsArb, nowArb, fc.integer({ min: 1, max: 12 }), (items, now, max_nodes) => {
        const input = ep.request.parse({ items, now, preferences: { max_nodes } });
        const out = expectCompilesCleanly(ep, input);
        expect(out.nodes.length).toBeLessThanOrEqual(max_nodes);
        const inputIds = new Set(items.map((i) => i.id));
        const nodeIds = new Set(out.nodes.map((x) => x.id));
        expect(nodeIds.size).toBe(out.nodes.length);
        for (const e of out.edges) expect(nodeIds.has(e.from) && nodeIds.has(e.to)).toBe(true);
        for (const id of out.topological_order) expect(nodeIds.has(id)).toBe(true);
        const refs = [
          ...out.critical_path.item_ids,
          ...out.blocked_items.map((b) => b.id),
          ...out.ready_items,
          ...out.late_items.map((l) => l.id),
          ...out.cycles.flat(),
        ];
        for (const r of refs) expect(inputIds.has(r)).toBe(true);
        for (const b of out.blocked_items)
          for (const r of b.reasons)
            if (r.kind !== 'missing_dependency') for (const x of r.refs) expect(inputIds.has(x)).toBe(true);
        const pos = new Map(out.topological_order.map((id, k) => [id, k]));
        for (const e of out.edges)
          if (pos.has(e.from) && pos.has(e.to)) expect(pos.get(e.from)!).toBeLessThan(pos.get(e.to)!);
        const blocked = new Set(out.blocked_items.map((b) => b.id));
        for (const r of out.ready_items) expect(blocked.has(r)).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});
