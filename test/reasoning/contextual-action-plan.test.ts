import fc from 'fast-check';
import { contextualActionPlan as ep } from '../../reasoning/contextual-action-plan';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /contextual-action/plan', () => {
  test('golden: meeting proposal ranks first with evidence; other-app actions suppressed', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    expect(out.ranked_actions.map((a) => a.action_id)).toEqual(['schedule', 'pay', 'summarize']);
    const top = out.ranked_actions[0];
    expect(top.evidence_event_ids).toEqual(['e2']);
    expect(top.required_approvals).toEqual(['external', 'effect:calendar_write']);
    expect(top.factors.map((f) => f.name)).toEqual([
      'app_match',
      'selection_fit',
      'keyword_match',
      'recency',
      'safety',
    ]);
    expect(out.ranked_actions[1].required_approvals).toContain('effect:money');
    expect(out.ranked_actions[2].required_approvals).toEqual([]); // read is auto-allowed
    expect(out.suppressed).toEqual([{ action_id: 'format', reason: 'applies in editor, not mail' }]);
    expect(out.ranked_actions.find((a) => a.action_id === 'delete')).toBeUndefined(); // cut by max_actions: lowest (destructive) score
    const all = run({ ...ep.example, preferences: { max_actions: 10 } });
    expect(all.ranked_actions.find((a) => a.action_id === 'delete')!.required_approvals).toEqual(['destructive']);
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, { candidate_actions: [{ id: 'a', title: 'A' }] }, 'context');
    expectRejectsAt(ep.request, { context: {} }, 'candidate_actions');
    expectRejectsAt(ep.request, { context: { app: 1 }, candidate_actions: [{ id: 'a', title: 'A' }] }, 'context.app');
    expectRejectsAt(ep.request, { context: {}, candidate_actions: [{ id: 'a' }] }, 'candidate_actions.0.title');
    expectRejectsAt(
      ep.request,
      { context: {}, candidate_actions: [{ id: 'a', title: 'A' }], recent_events: [{ id: 'e' }] },
      'recent_events.0.kind',
    );
    expectRejectsAt(
      ep.request,
      { context: {}, candidate_actions: [{ id: 'a', title: 'A' }], preferences: { max_actions: 5000 } },
      'preferences.max_actions',
    );
  });

  const word = fc.constantFrom('invoice', 'meeting', 'code', 'deploy', 'thread', 'pay', 'x');
  const action = fc.record(
    {
      id: fc.constantFrom('a1', 'a2', 'a3', 'a4'),
      title: word,
      apps: fc.array(fc.constantFrom('mail', 'editor'), { maxLength: 2 }),
      selection_kinds: fc.array(fc.constantFrom('text', 'code'), { maxLength: 1 }),
      keywords: fc.array(word, { maxLength: 3 }),
      effects: fc.array(fc.constantFrom('read', 'money', 'write'), { maxLength: 2 }),
      destructive: fc.boolean(),
      external: fc.boolean(),
      reversible: fc.boolean(),
      requires_approval: fc.boolean(),
    },
    { requiredKeys: ['id', 'title'] },
  );
  const event = fc.record(
    {
      id: fc.constantFrom('e1', 'e2', 'e3', 'e4', 'e5'),
      kind: fc.constantFrom('open', 'email', 'deploy'),
      title: word,
      time: fc.constantFrom('2026-05-04T08:00:00Z', '2026-05-04T09:00:00+02:00', 'bad'),
    },
    { requiredKeys: ['id', 'kind'] },
  );
  test('properties: total, deterministic, valid, capped, referentially closed', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            app: fc.constantFrom('mail', 'editor', 'sheets'),
            selection: fc.array(word, { maxLength: 4 }).map((w) => w.join(' ')),
            selection_kind: fc.constantFrom('text', 'code'),
          },
          { requiredKeys: [] },
        ),
        fc.array(event, { maxLength: 12 }),
        fc.array(action, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 5 }),
        (context, recent_events, candidate_actions, max_actions, recent_window) => {
          const input = ep.request.parse({
            context,
            recent_events,
            candidate_actions,
            preferences: { max_actions, recent_window },
          });
          const out = expectCompilesCleanly(ep, input);
          expect(out.ranked_actions.length).toBeLessThanOrEqual(max_actions);
          expect(out.context_summary.window_size).toBeLessThanOrEqual(recent_window);
          const actionIds = new Set<string>(candidate_actions.map((a) => a.id));
          const eventIds = new Set<string>(recent_events.map((e) => e.id));
          for (const a of out.ranked_actions) {
            expect(actionIds.has(a.action_id)).toBe(true);
            for (const e of a.evidence_event_ids) expect(eventIds.has(e)).toBe(true);
          }
          for (const s of out.suppressed) expect(actionIds.has(s.action_id)).toBe(true);
          for (let k = 1; k < out.ranked_actions.length; k++)
            expect(out.ranked_actions[k - 1].score).toBeGreaterThanOrEqual(out.ranked_actions[k].score);
          expect(out.ranked_actions.length + out.suppressed_count).toBeLessThanOrEqual(candidate_actions.length);
        },
      ),
      { numRuns: 100 },
    );
  });
});
