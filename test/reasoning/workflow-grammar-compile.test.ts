import fc from 'fast-check';
import { workflowGrammarCompile as ep } from '../../reasoning/workflow-grammar-compile';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /workflow/grammar/compile', () => {
  test('golden: refund workflow is gated, ordered and scored', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    const g = out.trigger_action_graph;
    expect(g.topological_order).toEqual(['lookup', 'refund', 'notify', 'close']);
    expect(g.cycles).toEqual([]);
    // destructive refund on an approval-requiring tool is gated, owner from the step
    const refundGate = out.approval_gates.find((x) => x.action_id === 'refund')!;
    expect(refundGate.reasons).toEqual(['destructive', 'tool_requires_approval']);
    expect(refundGate.owner).toBe('finance');
    // approvals[] rule "email customer" matches the notify step by words
    expect(out.approval_gates.find((x) => x.action_id === 'notify')?.owner).toBe('support lead');
    expect(g.edges).toContainEqual({ from: 'gate-refund', to: 'refund', kind: 'gate' });
    expect(g.edges).toContainEqual({ from: 'lookup', to: 'gate-refund', kind: 'needs' });
    // helpdesk is not an available tool
    expect(out.unavailable_tools).toEqual([{ action_id: 'close', tool: 'helpdesk' }]);
    expect(out.readiness_score.level).toBe('blocked');
    const names = out.readiness_score.factors.map((f) => f.name);
    expect(names).toContain('tools_available');
    expect(out.readiness_score.factors.reduce((s, f) => s + f.weight, 0)).toBeCloseTo(1);
    expect(out.readiness_score.factors.find((f) => f.name === 'tools_available')!.value).toBe(0.75);
    // variables: placeholders and the need nobody produces
    const vars = Object.fromEntries(out.variables.map((v) => [v.name, v]));
    expect(vars['photo evidence']).toEqual({ name: 'photo evidence', kind: 'input', used_by: ['refund'] });
    expect(vars.order_id.used_by).toEqual(['lookup']);
    expect(vars.refund_limit.kind).toBe('placeholder');
    expect(out.compiled_expression).toContain('GATE gate-refund APPROVE BY "finance"');
    expect(out.compiled_expression.split('\n')[0]).toBe('WORKFLOW "Refund damaged orders"');
    const modes = Object.fromEntries(out.dry_run_plan.steps.map((s) => [s.node_id, s.mode]));
    expect(modes).toMatchObject({
      trigger: 'observe_trigger',
      lookup: 'read',
      refund: 'simulate',
      close: 'skip_blocked',
      'gate-refund': 'approval_checkpoint',
    });
    expect(out.dry_run_plan.required_before_live).toBe(true);
  });

  test('cycles are reported and block readiness; max_nodes truncates in order', () => {
    const out = run({
      trigger: 'daily',
      actions: [
        { id: 'x', title: 'Fetch data', needs: [] },
        { id: 'a', title: 'Step A', needs: ['b', 'x'] },
        { id: 'b', title: 'Step B', needs: ['Step A'] },
        { id: 'c', title: 'Delete stale rows', needs: ['x'] },
      ],
      preferences: { require_human_approvals: true },
    });
    expect(out.trigger_action_graph.cycles).toEqual([['a', 'b']]);
    expect(out.failure_modes.some((f) => f.kind === 'dependency_cycle')).toBe(true);
    expect(out.readiness_score.level).toBe('blocked');
    expect(out.approval_gates.find((g) => g.action_id === 'c')?.reasons).toEqual([
      'inferred_destructive',
      'human_approval_preference',
    ]);
    const small = run({
      actions: [
        { id: 'p', title: 'p' },
        { id: 'q', title: 'q', needs: ['p'] },
        { id: 'r', title: 'r', needs: ['q'] },
      ],
      preferences: { max_nodes: 3 },
    });
    expect(small.trigger_action_graph.nodes.map((n) => n.id)).toEqual(['trigger', 'p', 'q']);
    expect(small.trigger_action_graph.truncated).toBe(true);
    expect(small.trigger_action_graph.omitted_actions).toBe(1);
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, {}, 'actions');
    expectRejectsAt(ep.request, { actions: [] }, 'actions');
    expectRejectsAt(ep.request, { actions: [{ title: 3 }] }, 'actions.0.title');
    expectRejectsAt(ep.request, { actions: [{ title: 'ok', needs: 'x' }] }, 'actions.0.needs');
    expectRejectsAt(ep.request, { actions: [{ title: 'ok', destructive: 'yes' }] }, 'actions.0.destructive');
    expectRejectsAt(ep.request, { actions: [{ title: 'ok' }], preferences: { max_nodes: 0 } }, 'preferences.max_nodes');
    expectRejectsAt(ep.request, { actions: [{ title: 'x'.repeat(501) }] }, 'actions.0.title');
    expectRejectsAt(ep.request, { actions: [{ title: 'ok' }], approvals: Array(201).fill({ when: '*' }) }, 'approvals');
    expect(ep.request.parse({ actions: [{ title: 'ok', extra: 1 }], junk: true })).not.toHaveProperty('junk');
  });

  const pool = ['a1', 'a2', 'a3', 'fetch', 'send mail', 'done', 'gate-a1', 'trigger'];
  const action = fc.record(
    {
      id: fc.constantFrom(...pool),
      title: fc.oneof(
        fc.constantFrom(...pool, 'Delete {{row}}', 'refund {{x}}', 'read'),
        fc.string({ minLength: 1, maxLength: 20 }),
      ),
      tool: fc.constantFrom('shop', 'mail', 'gone', 'ro'),
      owner: fc.constantFrom('ann', 'bo'),
      when: fc.string({ maxLength: 10 }),
      needs: fc.array(fc.oneof(fc.constantFrom(...pool), fc.string({ maxLength: 8 })), { maxLength: 4 }),
      done_signal: fc.constantFrom(...pool),
      destructive: fc.boolean(),
    },
    { requiredKeys: ['title'] },
  );
  const body = fc.record(
    {
      trigger: fc.string({ maxLength: 20 }),
      conditions: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
      exceptions: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
      actions: fc.array(action, { minLength: 1, maxLength: 25 }),
      available_tools: fc.array(
        fc.record({
          name: fc.constantFrom('shop', 'mail', 'ro'),
          actions: fc.array(fc.constantFrom('read', 'send', 'refund'), { maxLength: 2 }),
          read_only: fc.boolean(),
          requires_approval: fc.boolean(),
        }),
        { maxLength: 4 },
      ),
      approvals: fc.array(
        fc.record({
          when: fc.constantFrom('*', 'destructive', 'send mail', 'a2', 'refund', ''),
          owner: fc.constantFrom('lead', ''),
        }),
        { maxLength: 3 },
      ),
      preferences: fc.record(
        {
          max_nodes: fc.integer({ min: 1, max: 30 }),
          require_human_approvals: fc.boolean(),
          dry_run_first: fc.boolean(),
          prefer_read_only: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['actions'] },
  );

  test('properties: total, deterministic, valid, capped, referentially closed', () => {
    fc.assert(
      fc.property(body, (raw) => {
        const input = ep.request.parse(raw);
        const out = expectCompilesCleanly(ep, input, { surface: 'x' });
        const g = out.trigger_action_graph;
        expect(g.nodes.length).toBeLessThanOrEqual(input.preferences?.max_nodes ?? 200);
        const ids = new Set(g.nodes.map((n) => n.id));
        expect(ids.size).toBe(g.nodes.length);
        for (const e of g.edges) expect(ids.has(e.from) && ids.has(e.to)).toBe(true);
        for (const id of [...g.topological_order, ...g.cycles.flat()]) expect(ids.has(id)).toBe(true);
        for (const x of out.approval_gates) expect(ids.has(x.id) && ids.has(x.action_id)).toBe(true);
        for (const x of out.unavailable_tools) expect(ids.has(x.action_id)).toBe(true);
        for (const f of out.failure_modes) if (f.node_id) expect(ids.has(f.node_id)).toBe(true);
        for (const v of out.variables) for (const u of v.used_by) expect(ids.has(u)).toBe(true);
        for (const s of out.dry_run_plan.steps) for (const u of [s.node_id, ...s.after]) expect(ids.has(u)).toBe(true);
        const pos = new Map(g.topological_order.map((id, k) => [id, k]));
        for (const e of g.edges)
          if (e.kind === 'needs' && pos.has(e.from) && pos.has(e.to))
            expect(pos.get(e.from)!).toBeLessThan(pos.get(e.to)!);
        expect(out.readiness_score.score).toBeGreaterThanOrEqual(0);
        expect(out.readiness_score.score).toBeLessThanOrEqual(100);
      }),
      { numRuns: 80 },
    );
  });
});
