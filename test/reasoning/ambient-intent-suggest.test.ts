import fc from 'fast-check';
import { ambientIntentSuggest as ep, compileAmbientIntentSuggest } from '../../reasoning/ambient-intent-suggest';
import { itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileAmbientIntentSuggest(ep.request.parse(body), {});

describe('ambient/intent/suggest golden', () => {
  const out = run(ep.example);

  it('ranks by explicit factors and maps states to intents', () => {
    expect(out.suggestions.map((s) => [s.candidate_id, s.intent])).toEqual([
      ['w3', 'reschedule'],
      ['e2', 'close_loop'],
      ['b1', 'prepare'],
    ]);
    const e2 = out.suggestions[1];
    expect(e2.evidence_signal_ids).toEqual(['sig-1']);
    expect(e2.factors.goal_alignment).toBe(1);
    expect(e2.reasons).toContain('in the active project');
  });

  it('respects cooldowns and the max_suggestions cap', () => {
    expect(out.suppressed).toEqual([
      { candidate_id: 'w1', reason: 'cooldown: worked on heavily just now', until: '2026-04-27T17:10:00Z' },
      { candidate_id: 'e3', reason: 'ranked below max_suggestions (3)', until: null },
    ]);
    expect(out.next_cooldowns[0]).toEqual({
      key: 'w3',
      until: '2026-04-27T17:35:00Z',
      reason: 'suggested (reschedule)',
    });
  });

  it('lets an expired cooldown pass, honours dismiss signals, quiet mode and low energy', () => {
    const later = run({
      ...ep.example,
      now: '2026-04-27T18:00:00Z',
      preferences: { max_suggestions: 10, min_score: 0 },
    });
    expect(later.suggestions.map((s) => s.candidate_id)).toContain('w1');
    const dismissed = run({ ...ep.example, signals: [{ id: 'd', kind: 'dismiss', item_id: 'w3' }] });
    expect(dismissed.suggestions.map((s) => s.candidate_id)).not.toContain('w3');
    expect(dismissed.suppressed.find((s) => s.candidate_id === 'w3')!.reason).toBe('dismissed by signal d');
    const quiet = run({ ...ep.example, preferences: { quiet: true } });
    expect(quiet.suggestions.map((s) => s.candidate_id)).toEqual(['w3', 'b1']);
    const tired = run({
      ...ep.example,
      now: '2026-04-27T18:00:00Z',
      signals: [{ kind: 'energy', value: 'low' }],
      preferences: { max_suggestions: 10, min_score: 0 },
    });
    expect(tired.suggestions.find((s) => s.candidate_id === 'w1')!.factors.state).toBe(0.4);
  });
});

describe('ambient/intent/suggest request schema', () => {
  it('requires suggestion_context with candidates', () => {
    expectRejectsAt(ep.request, { signals: [] }, 'suggestion_context');
    expectRejectsAt(ep.request, { suggestion_context: {} }, 'suggestion_context.candidates');
  });
  it('names bad nested fields', () => {
    expectRejectsAt(
      ep.request,
      { suggestion_context: { candidates: [{ id: 'a', title: 't', state: 'sleeping' }] } },
      'suggestion_context.candidates.0.state',
    );
    expectRejectsAt(
      ep.request,
      { suggestion_context: { candidates: [] }, signals: [{ kind: 'x', strength: 2 }] },
      'signals.0.strength',
    );
    expectRejectsAt(
      ep.request,
      { suggestion_context: { candidates: [] }, preferences: { max_suggestions: 51 } },
      'preferences.max_suggestions',
    );
  });
});

describe('ambient/intent/suggest properties', () => {
  const id = fc.constantFrom('a', 'b', 'c', 'd', 'e');
  const t = fc.oneof(
    fc.integer({ min: 0, max: 100 }).map((h) => new Date(Date.UTC(2026, 3, 25) + h * 3_600_000).toISOString()),
    fc.constant('??'),
  );
  const body = fc.record(
    {
      now: fc.constantFrom('2026-04-27T12:00:00Z', undefined),
      suggestion_context: fc.record(
        {
          now: fc.option(t, { nil: undefined }),
          active_project: fc.constantFrom('p', 'q'),
          active_goal: fc.constantFrom('ship the spec', 'rest'),
          candidates: fc.array(
            fc.record(
              {
                id,
                title: fc.constantFrom('Spec draft', 'Deck', 'Ship it'),
                project: fc.option(fc.constantFrom('p', 'q'), { nil: null }),
                state: fc.constantFrom('active', 'paused', 'open_loop', 'commitment', 'overdue', 'done'),
                last_seen: fc.option(t, { nil: null }),
                due: fc.option(t, { nil: null }),
                weight: fc.double({ min: 0, max: 1, noNaN: true }),
              },
              { requiredKeys: ['id', 'title', 'state'] },
            ),
            { maxLength: 12 },
          ),
          cooldowns: fc.array(fc.record({ key: id, until: t }), { maxLength: 3 }),
        },
        { requiredKeys: ['candidates'] },
      ),
      signals: fc.array(
        fc.record(
          {
            id: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }),
            kind: fc.constantFrom('app_open', 'dismiss', 'energy'),
            value: fc.constantFrom('low', 'spec', 'deck review'),
            strength: fc.double({ min: 0, max: 1, noNaN: true }),
            item_id: fc.option(id, { nil: undefined }),
            project: fc.option(fc.constantFrom('p', 'q'), { nil: undefined }),
          },
          { requiredKeys: ['kind'] },
        ),
        { maxLength: 8 },
      ),
      preferences: fc.record({
        max_suggestions: fc.integer({ min: 1, max: 4 }),
        min_score: fc.double({ min: 0, max: 1, noNaN: true }),
        quiet: fc.boolean(),
      }),
    },
    { requiredKeys: ['suggestion_context'] },
  );
  itCompilesGeneratedBodies(ep, body, (input, out) => {
    expect(out.suggestions.length).toBeLessThanOrEqual(input.preferences?.max_suggestions ?? 3);
    const cands = new Set(input.suggestion_context.candidates.map((c) => c.id));
    const sigIds = new Set((input.signals ?? []).map((s, i) => s.id ?? `s${i}`));
    for (const s of out.suggestions) {
      expect(cands.has(s.candidate_id)).toBe(true);
      s.evidence_signal_ids.forEach((x) => expect(sigIds.has(x)).toBe(true));
      expect(s.score).toBeGreaterThanOrEqual(input.preferences?.min_score ?? 0.2);
    }
    const ids = out.suggestions.map((s) => s.candidate_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const s of out.suppressed) expect(cands.has(s.candidate_id)).toBe(true);
  });
});
