import fc from 'fast-check';
import { signalsOpportunities as ep, compileSignalsOpportunities } from '../../reasoning/signals-opportunities';
import { itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileSignalsOpportunities(ep.request.parse(body), {});

describe('signals/opportunities golden', () => {
  const out = run(ep.example);
  it('clusters related signals with evidence and ranks by explicit factors', () => {
    expect(out.opportunities.map((o) => o.id)).toEqual(['opp-export', 'opp-team']);
    const exp = out.opportunities[0];
    expect(exp.evidence_signal_ids.sort()).toEqual(['s1', 's2', 's3']);
    expect(exp.terms.slice(0, 2)).toEqual(['export', 'csv']);
    expect(exp).toMatchObject({
      momentum: 'rising',
      entities: ['Acme', 'Globex', 'Initech'],
      kinds: ['complaint', 'feature_request'],
    });
    expect(out.opportunities[1].factors.focus).toBe(1);
    expect(out.unclustered_signal_ids).toEqual(['s6']);
  });
  it('weights recency by the half-life', () => {
    const fresh = run({
      now: '2026-04-27T12:00:00Z',
      signals: [
        { id: 'a', tags: ['x'], time: '2026-04-27T12:00:00Z' },
        { id: 'b', tags: ['x'], time: '2026-04-27T12:00:00Z' },
      ],
    });
    const old = run({
      now: '2026-04-27T12:00:00Z',
      signals: [
        { id: 'a', tags: ['x'], time: '2026-04-24T12:00:00Z' },
        { id: 'b', tags: ['x'], time: '2026-04-24T12:00:00Z' },
      ],
    });
    expect(fresh.opportunities[0].factors.recency).toBe(1);
    expect(old.opportunities[0].factors.recency).toBe(0.5);
  });
});

describe('signals/opportunities request schema', () => {
  it('requires signals', () => expectRejectsAt(ep.request, {}, 'signals'));
  it('names bad nested fields', () => {
    expectRejectsAt(ep.request, { signals: [{ id: 'a', strength: 1.5 }] }, 'signals.0.strength');
    expectRejectsAt(ep.request, { signals: [{ id: '' }] }, 'signals.0.id');
    expectRejectsAt(
      ep.request,
      { signals: [], preferences: { max_opportunities: 0 } },
      'preferences.max_opportunities',
    );
    expectRejectsAt(ep.request, { signals: [{ id: 'a', tags: Array(51).fill('t') }] }, 'signals.0.tags');
  });
});

describe('signals/opportunities properties', () => {
  const body = fc.record(
    {
      now: fc.constantFrom('2026-04-27T12:00:00Z', undefined),
      focus: fc.constantFrom('export speed', ''),
      signals: fc.array(
        fc.record(
          {
            id: fc.string({ minLength: 1, maxLength: 4 }),
            kind: fc.constantFrom('lead', 'complaint', 'usage_spike'),
            text: fc.constantFrom('csv export slow', 'team pricing', 'dark mode', 'export invoices', ''),
            tags: fc.array(fc.constantFrom('export', 'team', 'ui'), { maxLength: 2 }),
            strength: fc.double({ min: 0, max: 1, noNaN: true }),
            time: fc.oneof(
              fc
                .integer({ min: 0, max: 300 })
                .map((h) => new Date(Date.UTC(2026, 3, 15) + h * 3_600_000).toISOString()),
              fc.constant('bad'),
            ),
            entity: fc.constantFrom('A', 'B', 'C'),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 30 },
      ),
      preferences: fc.record({
        max_opportunities: fc.integer({ min: 1, max: 4 }),
        min_signals: fc.integer({ min: 1, max: 4 }),
        half_life_hours: fc.integer({ min: 1, max: 200 }),
      }),
    },
    { requiredKeys: ['signals'] },
  );
  itCompilesGeneratedBodies(ep, body, (input, out) => {
    expect(out.opportunities.length).toBeLessThanOrEqual(input.preferences?.max_opportunities ?? 5);
    const ids = new Set(input.signals.map((s) => s.id));
    for (const o of out.opportunities) {
      o.evidence_signal_ids.forEach((id) => expect(ids.has(id)).toBe(true));
      expect(o.signal_count).toBeGreaterThanOrEqual(input.preferences?.min_signals ?? 2);
      expect(o.score).toBeGreaterThanOrEqual(0);
      expect(o.score).toBeLessThanOrEqual(1);
    }
    out.unclustered_signal_ids.forEach((id) => expect(ids.has(id)).toBe(true));
    expect(new Set(out.opportunities.map((o) => o.id)).size).toBe(out.opportunities.length);
  });
});
