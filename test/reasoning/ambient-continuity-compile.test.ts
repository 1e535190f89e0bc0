import fc from 'fast-check';
import { ambientContinuityCompile as ep, compileAmbientContinuity } from '../../reasoning/ambient-continuity-compile';
import { ambientIntentSuggest } from '../../reasoning/ambient-intent-suggest';
import { expectCompilesCleanly, itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileAmbientContinuity(ep.request.parse(body), {});

describe('ambient/continuity/compile golden', () => {
  const out = run(ep.example);
  const entry = (id: string) => out.ledger.entries.find((e) => e.id === id)!;

  it('merges events across surfaces into one ledger entry per item', () => {
    expect(entry('w1')).toMatchObject({
      state: 'active',
      touches: 6,
      surfaces: ['editor', 'mobile'],
      event_ids: ['e5', 'e1'],
    });
    expect(out.ledger.entries[0].id).toBe('w1');
    expect(entry('w2').state).toBe('done');
    expect(entry('old-draft')).toMatchObject({ carried_over: true, state: 'paused' });
  });

  it('classifies paused work, open loops and commitments', () => {
    expect(out.paused_work.map((p) => p.id)).toEqual(['e3', 'old-draft']);
    expect(out.paused_work[0].reason).toBe('untouched for 78 h');
    expect(out.open_loops).toEqual([expect.objectContaining({ id: 'e2', reason: 'status waiting', age_hours: 2 })]);
    expect(out.commitments.map((c) => [c.id, c.status])).toEqual([
      ['w3', 'overdue'],
      ['b1', 'upcoming'],
    ]);
  });

  it('emits cooldowns: carried, heavy work, finished, recurring', () => {
    expect(out.cooldown_hints.map((c) => [c.key, c.until])).toEqual([
      ['old-draft', '2026-04-28T09:00:00Z'],
      ['w1', '2026-04-27T17:10:00Z'],
      ['w2', '2026-04-28T11:00:00Z'],
      ['e4', '2026-04-28T09:00:00Z'],
    ]);
    expect(out.recent_events[0]).toMatchObject({ id: 'e5', entry_id: 'w1' });
  });

  it('produces a suggestion_context that /ambient/intent/suggest accepts', () => {
    const req = ambientIntentSuggest.request.safeParse({
      suggestion_context: out.suggestion_context,
      signals: [{ kind: 'app_open', item_id: 'e2' }],
    });
    expect(req.success).toBe(true);
    const sugg = ambientIntentSuggest.compile(req.data!, {});
    expect(sugg.suppressed.map((s) => s.candidate_id)).toContain('old-draft');
    expect(sugg.suggestions.map((s) => s.candidate_id)).not.toContain('w1');
    expect(out.suggestion_context.candidates.find((c) => c.id === 'b1')).toMatchObject({
      project: 'billing',
      state: 'commitment',
    });
  });

  it('carries the ledger forward as previous_ledger', () => {
    const again = run({
      now: '2026-04-28T10:00:00Z',
      recent_events: [],
      previous_ledger: { entries: out.ledger.entries, cooldowns: out.cooldown_hints },
    });
    expect(again.ledger.entries.every((e) => e.carried_over)).toBe(true);
    expect(again.ledger.entries.find((e) => e.id === 'w1')!.touches).toBe(6);
    expect(again.cooldown_hints.map((c) => c.key)).toEqual(['w2']);
  });
});

describe('ambient/continuity/compile request schema', () => {
  it('recent_events default to none (issue 10: optional where a sensible default exists)', () =>
    expect(ep.request.parse({ work_items: [] }).recent_events).toEqual([]));
  it('names bad nested fields', () => {
    expectRejectsAt(ep.request, { recent_events: [{ id: 1 }] }, 'recent_events.0.id');
    expectRejectsAt(
      ep.request,
      { recent_events: [], work_items: [{ id: 'a', importance: 3 }] },
      'work_items.0.importance',
    );
    expectRejectsAt(
      ep.request,
      { recent_events: [], previous_ledger: { cooldowns: [{ key: 'a' }] } },
      'previous_ledger.cooldowns.0.until',
    );
    expectRejectsAt(
      ep.request,
      { recent_events: [{ id: 'a', signals: ['x'.repeat(501)] }] },
      'recent_events.0.signals.0',
    );
  });
  it("bounds carried-over touches, so adding this compile's touches stays a safe integer (found by the mutation property)", () => {
    const body = { ...ep.example, previous_ledger: { entries: [{ id: 'w1', touches: Number.MAX_SAFE_INTEGER }] } };
    expectRejectsAt(ep.request, body, 'previous_ledger.entries.0.touches');
    const out = expectCompilesCleanly(
      ep,
      ep.request.parse({
        ...body,
        previous_ledger: {
          entries: [
            { id: 'w1', touches: 1_000_000_000 },
            { id: 'w1', touches: 1_000_000_000 },
          ],
        },
      }),
    );
    expect(out.ledger.entries.find((x) => x.id === 'w1')!.touches).toBeGreaterThanOrEqual(2_000_000_000);
  });
});

describe('ambient/continuity/compile properties', () => {
  const t = fc.oneof(
    fc.integer({ min: 0, max: 200 }).map((h) => new Date(Date.UTC(2026, 3, 20) + h * 3_600_000).toISOString()),
    fc.constant('nope'),
  );
  const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
  const status = fc.constantFrom('active', 'paused', 'waiting', 'done', 'todo', '');
  const body = fc.record(
    {
      now: fc.constantFrom('2026-04-27T12:00:00Z', undefined, 'bad'),
      timezone: fc.constantFrom('UTC', 'America/Chicago', 'X/Y'),
      active_project: fc.constantFrom('p1', 'p2'),
      recent_events: fc.array(
        fc.record(
          {
            id,
            title: fc.constantFrom('Spec', 'Deck', 'Inbox', 'spec'),
            project: fc.constantFrom('p1', 'p2'),
            status,
            source: fc.constantFrom('web', 'mobile'),
            time: t,
            item_id: fc.option(id, { nil: undefined }),
            recurrence: fc.constantFrom('daily', 'weekly', 'never', undefined),
            signals: fc.array(fc.constantFrom('question', 'focus'), { maxLength: 2 }),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 15 },
      ),
      work_items: fc.array(
        fc.record(
          {
            id,
            title: fc.constantFrom('Spec', 'Deck'),
            status,
            updated_at: t,
            due: t,
            importance: fc.double({ min: 0, max: 1, noNaN: true }),
          },
          { requiredKeys: ['id'] },
        ),
        { maxLength: 6 },
      ),
      temporal_commitments: fc.array(
        fc.record({ id, task_id: id, start: t, end: t, status }, { requiredKeys: ['id'] }),
        { maxLength: 4 },
      ),
      previous_ledger: fc.record({
        entries: fc.array(
          fc.record({ id, state: status, touches: fc.nat(5), last_seen: t }, { requiredKeys: ['id'] }),
          { maxLength: 4 },
        ),
        cooldowns: fc.array(fc.record({ key: id, until: t }), { maxLength: 3 }),
      }),
      preferences: fc.record({
        max_entries: fc.integer({ min: 1, max: 5 }),
        max_events: fc.integer({ min: 1, max: 5 }),
        max_candidates: fc.integer({ min: 1, max: 5 }),
        stale_after_hours: fc.integer({ min: 1, max: 100 }),
      }),
    },
    { requiredKeys: ['recent_events'] },
  );

  itCompilesGeneratedBodies(ep, body, (input, out) => {
    expect(ambientIntentSuggest.request.safeParse({ suggestion_context: out.suggestion_context }).success).toBe(true);
    const p = input.preferences;
    if (p?.max_entries) expect(out.ledger.entries.length).toBeLessThanOrEqual(p.max_entries);
    if (p?.max_events) expect(out.recent_events.length).toBeLessThanOrEqual(p.max_events);
    if (p?.max_candidates) expect(out.suggestion_context.candidates.length).toBeLessThanOrEqual(p.max_candidates);
    const inputIds = new Set([
      ...input.recent_events.flatMap((e) => [e.id, e.item_id ?? e.id]),
      ...(input.work_items ?? []).map((w) => w.id),
      ...(input.temporal_commitments ?? []).flatMap((c) => [c.id, c.task_id ?? c.id]),
      ...(input.previous_ledger?.entries ?? []).map((e) => e.id),
      ...(input.previous_ledger?.cooldowns ?? []).map((c) => c.key),
    ]);
    const refs = [
      ...out.ledger.entries.flatMap((e) => [e.id, ...e.event_ids]),
      ...out.paused_work.map((x) => x.id),
      ...out.open_loops.flatMap((x) => [x.id, ...x.event_ids]),
      ...out.commitments.flatMap((c) => [c.id, c.task_id ?? c.id]),
      ...out.recent_events.flatMap((r) => [r.id, r.entry_id]),
      ...out.cooldown_hints.map((c) => c.key),
      ...out.suggestion_context.candidates.map((c) => c.id),
    ];
    for (const r of refs) expect(inputIds.has(r)).toBe(true);
  });
});
