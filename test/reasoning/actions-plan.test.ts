import fc from 'fast-check';
import { actionsPlan as ep } from '../../reasoning/actions-plan';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /actions/plan', () => {
  test('golden: routes by scored factors, gates money and customer touch, honours constraints', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    const route = Object.fromEntries(out.recommended_provider_route.map((r) => [r.action_id, r]));
    expect(route.lookup).toMatchObject({ provider_id: 'erp', requires_approval: false });
    // legacybill is cheaper but excluded by "never use legacybill"
    expect(route.charge).toMatchObject({ provider_id: 'stripe', fallback_provider_id: null, requires_approval: true });
    // smtp-backup is unavailable, so no fallback
    expect(route.notify).toMatchObject({ provider_id: 'mailer', fallback_provider_id: null });
    const legacy = out.ranked_action_candidates.find((c) => c.provider_id === 'legacybill')!;
    expect(legacy.eligible).toBe(false);
    expect(legacy.notes).toContain('provider excluded by a constraint');
    const gates = Object.fromEntries(out.approval_gate.gated_actions.map((g) => [g.action_id, g.reasons]));
    expect(gates.charge).toEqual(['external_write', 'money']);
    expect(gates.notify).toEqual(['external_write', 'customer_touch']);
    expect(out.approval_gate.autonomous_actions).toEqual(['lookup']);
    expect(out.approval_gate.owner).toBe('finance lead');
    // explicit factors with weights summing to 1; eligible candidates ranked first
    const top = out.ranked_action_candidates[0];
    expect(top.factors.map((f) => f.name)).toEqual([
      'reliability',
      'cost',
      'availability',
      'capability_match',
      'policy_fit',
    ]);
    expect(top.factors.reduce((s, f) => s + f.weight, 0)).toBeCloseTo(1);
    const firstIneligible = out.ranked_action_candidates.findIndex((c) => !c.eligible);
    expect(out.ranked_action_candidates.slice(firstIneligible).every((c) => !c.eligible)).toBe(true);
    expect(out.audit_plan.records.find((r) => r.action_id === 'charge')!.redact).toEqual(['card_token']);
    expect(out.dry_run_instructions.find((d) => d.action_id === 'charge')!.instruction).toMatch(/Quote only/);
    expect(out.policy_labels.find((l) => l.action_id === 'lookup')!.labels).toEqual(['read', 'autonomous_ok']);
  });

  test('policy switches, risk tolerance and memory policy', () => {
    const base = {
      intent: 'Delete the old customer records',
      available_providers: [{ id: 'db', capabilities: ['records'] }],
    };
    const strict = run({ ...base, risk_tolerance: 'low' });
    expect(strict.approval_gate.gated_actions[0].reasons).toContain('destructive');
    expect(strict.ranked_action_candidates[0].factors[0]).toMatchObject({ name: 'reliability', weight: 0.45 });
    const lax = run({
      ...base,
      approval_policy: {
        require_for_destructive: false,
        require_for_customer_touch: false,
        require_for_external_writes: false,
      },
    });
    expect(lax.approval_gate.required).toBe(false);
    const auto = run({ ...base, approval_policy: { allowed_autonomous_effects: ['destructive'] } });
    expect(auto.approval_gate.required).toBe(false);
    const mem = run({
      ...base,
      memory_policy: {
        minimize_context: true,
        allowed_memory_kinds: ['outcome', 'provider_preference'],
        prohibited_memory_kinds: ['outcome'],
      },
    });
    expect(mem.memory_plan.store_kinds).toEqual(['provider_preference']);
    expect(mem.memory_plan.seeds.every((s) => s.kind === 'provider_preference')).toBe(true);
    expect(mem.audit_plan.records[0].fields).toContain('input_names');
    const none = run({ intent: 'Ship it' });
    expect(none.recommended_provider_route[0].provider_id).toBeNull();
    expect(none.policy_labels[0].labels).toContain('no_provider');
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, {}, 'intent');
    expectRejectsAt(ep.request, { intent: 'x', action_hints: [{ title: '' }] }, 'action_hints.0.title');
    expectRejectsAt(
      ep.request,
      { intent: 'x', available_providers: [{ id: 'p', reliability: 2 }] },
      'available_providers.0.reliability',
    );
    expectRejectsAt(
      ep.request,
      { intent: 'x', available_providers: [{ id: 'p', cost: 'pricey' }] },
      'available_providers.0.cost',
    );
    expectRejectsAt(
      ep.request,
      { intent: 'x', approval_policy: { require_for_money: 'yes' } },
      'approval_policy.require_for_money',
    );
    expectRejectsAt(
      ep.request,
      { intent: 'x', memory_policy: { allowed_memory_kinds: 'all' } },
      'memory_policy.allowed_memory_kinds',
    );
    expectRejectsAt(ep.request, { intent: 'x', preferences: { max_candidates: 1.5 } }, 'preferences.max_candidates');
    expectRejectsAt(ep.request, { intent: 'x'.repeat(501) }, 'intent');
  });

  const word = fc.constantFrom(
    'read',
    'charge',
    'email',
    'delete',
    'customer',
    'report',
    'invoice',
    'sync',
    'acme',
    'p1',
  );
  const hint = fc.record(
    {
      id: fc.constantFrom('a', 'b', 'c', 'h1'),
      title: fc.array(word, { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')),
      provider: fc.constantFrom('p1', 'p2', 'nope'),
      tool: word,
      inputs: fc.array(fc.constantFrom('card_token', 'name', 'password'), { maxLength: 3 }),
      effects: fc.array(fc.constantFrom('money', 'customer touch', 'external_write', 'destructive', 'misc'), {
        maxLength: 2,
      }),
      destructive: fc.boolean(),
      external: fc.boolean(),
    },
    { requiredKeys: ['title'] },
  );
  const prov = fc.record(
    {
      id: fc.constantFrom('p1', 'p2', 'p3', 'acme'),
      name: word,
      capabilities: fc.array(word, { maxLength: 3 }),
      reliability: fc.double({ min: 0, max: 1, noNaN: true }),
      cost: fc.double({ min: 0, max: 100, noNaN: true }),
      requires_approval: fc.boolean(),
      read_only: fc.boolean(),
      available: fc.boolean(),
    },
    { requiredKeys: ['id'] },
  );
  const body = fc.record(
    {
      intent: fc.string({ minLength: 1, maxLength: 30 }),
      risk_tolerance: fc.constantFrom('low', 'medium', 'high', 'weird'),
      constraints: fc.array(fc.constantFrom('never use p2', 'no email', 'avoid acme', 'be nice'), { maxLength: 2 }),
      action_hints: fc.array(hint, { maxLength: 15 }),
      available_providers: fc.array(prov, { maxLength: 6 }),
      approval_policy: fc.record(
        {
          require_for_money: fc.boolean(),
          require_for_destructive: fc.boolean(),
          allowed_autonomous_effects: fc.array(fc.constantFrom('read', 'write', 'money'), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      ),
      memory_policy: fc.record(
        {
          minimize_context: fc.boolean(),
          record_outcome: fc.boolean(),
          prohibited_memory_kinds: fc.array(fc.constantFrom('outcome', 'decision'), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      ),
      preferences: fc.record(
        { max_candidates: fc.integer({ min: 1, max: 10 }), max_providers_per_action: fc.integer({ min: 1, max: 4 }) },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['intent'] },
  );

  test('properties: total, deterministic, valid, capped, referentially closed', () => {
    fc.assert(
      fc.property(body, (raw) => {
        const input = ep.request.parse(raw);
        const out = expectCompilesCleanly(ep, input);
        expect(out.ranked_action_candidates.length).toBeLessThanOrEqual(input.preferences?.max_candidates ?? 50);
        const providerIds = new Set((input.available_providers ?? []).map((p) => p.id));
        const nActions = Math.max(1, input.action_hints?.length ?? 0);
        const actionIds = new Set(out.recommended_provider_route.map((r) => r.action_id));
        expect(actionIds.size).toBe(nActions);
        for (const c of out.ranked_action_candidates) {
          expect(actionIds.has(c.action_id)).toBe(true);
          if (c.provider_id) expect(providerIds.has(c.provider_id)).toBe(true);
        }
        for (const r of out.recommended_provider_route)
          for (const p of [r.provider_id, r.fallback_provider_id]) if (p) expect(providerIds.has(p)).toBe(true);
        for (const r of out.recommended_provider_route)
          if (r.provider_id)
            expect(input.available_providers!.find((p) => p.id === r.provider_id)!.available).not.toBe(false);
        for (const g of out.approval_gate.gated_actions) expect(actionIds.has(g.action_id)).toBe(true);
        for (const x of [
          ...out.policy_labels,
          ...out.audit_plan.records,
          ...out.dry_run_instructions,
          ...out.memory_plan.seeds,
        ])
          expect(actionIds.has(x.action_id)).toBe(true);
        const gated = new Set(out.approval_gate.gated_actions.map((g) => g.action_id));
        for (const r of out.recommended_provider_route) expect(r.requires_approval).toBe(gated.has(r.action_id));
        for (let k = 1; k < out.ranked_action_candidates.length; k++)
          expect(out.ranked_action_candidates[k].rank).toBe(k + 1);
      }),
      { numRuns: 80 },
    );
  });
});
