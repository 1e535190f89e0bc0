import fc from 'fast-check';
import { memorySemanticGraph as ep } from '../../reasoning/memory-semantic-graph';
import { MAX_ITEMS } from '../../schema/reasoning/common';
import { MAX_TOTAL_TEXT } from '../../schema/reasoning/memory-semantic-graph';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('memory/semantic/graph golden example', () => {
  const out = run(ep.example);
  const node = (label: string) => out.nodes.find((n) => n.label === label)!;
  const typed = out.edges.filter((e) => e.type !== 'co_occurs').map((e) => `${e.from} ${e.type} ${e.to}`);
  it('finds entities, concepts and tags (sentence-initial names included)', () => {
    expect(node('Priya').kind).toBe('entity');
    expect(node('Acme Robotics').item_ids).toEqual(['m1', 'm2']);
    expect(node('fleet dashboard').kind).toBe('concept');
    expect(out.nodes.find((n) => n.label === 'dashboard')).toBeUndefined(); // covered by "fleet dashboard"
    expect(node('infra').kind).toBe('tag');
  });
  it('types edges from relation cues', () => {
    expect(typed).toEqual(
      expect.arrayContaining([
        'entity-priya works_at entity-acme-robotics',
        'entity-acme-robotics uses entity-kubernetes',
        'concept-fleet-dashboard depends_on entity-kubernetes',
        'entity-priya located_in entity-lisbon',
      ]),
    );
    expect(typed.some((t) => t.includes(' is_a '))).toBe(false); // "is a city" names no node
  });
  it('clusters people apart from infrastructure', () => {
    expect(node('Priya').cluster_id).toBe(node('Lisbon').cluster_id);
    expect(node('Kubernetes').cluster_id).toBe(node('Postgres').cluster_id);
    expect(node('Priya').cluster_id).not.toBe(node('Postgres').cluster_id);
  });
  it('honours max_nodes', () => {
    const small = run({ ...ep.example, preferences: { max_nodes: 3 } });
    expect(small.nodes).toHaveLength(3);
    expect(small.stats.dropped_nodes).toBeGreaterThan(0);
  });
});

describe('memory/semantic/graph request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, {}, 'items');
    expectRejectsAt(ep.request, { items: [{ id: 'a' }] }, 'items.0.text');
    expectRejectsAt(ep.request, { items: [{ id: 'a', text: 'x', tags: [1] }] }, 'items.0.tags.0');
    expectRejectsAt(
      ep.request,
      { items: [{ id: 'a', text: 'x' }], preferences: { max_nodes: 0 } },
      'preferences.max_nodes',
    );
    // Output caps bound the worst-case compile time (1 MiB of text) on the API's event loop.
    expectRejectsAt(
      ep.request,
      { items: [{ id: 'a', text: 'x' }], preferences: { max_nodes: 501 } },
      'preferences.max_nodes',
    );
    expectRejectsAt(
      ep.request,
      { items: [{ id: 'a', text: 'x' }], preferences: { max_edges: 2001 } },
      'preferences.max_edges',
    );
    expect(
      ep.request.safeParse({ items: [{ id: 'a', text: 'x' }], preferences: { max_nodes: 500, max_edges: 2000 } })
        .success,
    ).toBe(true);
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `m${i}`, text: 'x'.repeat(20_000) }));
    expect(ep.request.safeParse({ items: items(MAX_TOTAL_TEXT / 20_000) }).success).toBe(true);
    expectRejectsAt(ep.request, { items: [...items(MAX_TOTAL_TEXT / 20_000), { id: 'one-more', text: 'x' }] }, 'items');
    expectRejectsAt(
      ep.request,
      { items: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => ({ id: `m${i}`, text: 'x' })) },
      'items',
    );
  });
});

const words = [
  'Ana',
  'Bo',
  'Acme Corp',
  'works at',
  'uses',
  'is a',
  'depends on',
  'lives in',
  'Berlin',
  'the',
  'rocket engine',
  'engine',
  'data',
  'likes',
];
const reqArb = fc.record({
  items: fc.array(
    fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      text: fc
        .array(
          fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 }).map((w) => w.join(' ') + '.'),
          { maxLength: 4 },
        )
        .map((s) => s.join(' ')),
      tags: fc.option(fc.array(fc.constantFrom('x', 'Y', ' '), { maxLength: 2 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  preferences: fc.record(
    {
      max_nodes: fc.integer({ min: 1, max: 8 }),
      max_edges: fc.integer({ min: 1, max: 10 }),
      include_tags: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
});

describe('memory/semantic/graph properties', () => {
  it('never throws, is deterministic, honours caps and keeps references valid', () => {
    fc.assert(
      fc.property(reqArb, (body) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body);
        const maxNodes = input.preferences.max_nodes ?? 50;
        expect(out.nodes.length).toBeLessThanOrEqual(maxNodes);
        expect(out.edges.length).toBeLessThanOrEqual(input.preferences.max_edges ?? 4 * maxNodes);
        const ids = new Set(out.nodes.map((n) => n.id));
        expect(ids.size).toBe(out.nodes.length);
        const items = new Set(input.items.map((i) => i.id));
        const clusters = new Set(out.clusters.map((c) => c.id));
        for (const n of out.nodes) {
          expect(clusters.has(n.cluster_id)).toBe(true);
          for (const i of n.item_ids) expect(items.has(i)).toBe(true);
        }
        for (const e of out.edges) {
          expect(ids.has(e.from) && ids.has(e.to)).toBe(true);
          for (const i of e.evidence_item_ids) expect(items.has(i)).toBe(true);
        }
        expect(out.clusters.flatMap((c) => c.node_ids).sort()).toEqual([...ids].sort());
        for (const i of out.unlinked_item_ids) expect(items.has(i)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
