import fc from 'fast-check';
import { proceduralCrystallize as ep } from '../../reasoning/procedural-crystallize';
import { MAX_ITEMS } from '../../schema/reasoning/common';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('procedural/crystallize golden example', () => {
  const out = run(ep.example);
  it('detects the common step sequence in consensus order', () => {
    expect(out.procedure.steps.map((s) => s.action)).toEqual([
      'open CRM',
      'create contact',
      'create invoice',
      'send welcome email',
    ]);
    expect(out.procedure.steps.find((s) => s.action === 'create invoice')!.optional).toBe(true);
    expect(out.variations).toEqual([
      { action: 'check duplicate', tool: 'HubSpot', support: 0.333, reason: 'done in some traces only' },
    ]);
  });
  it('turns varying parameters into typed variables and keeps constants', () => {
    const vars = Object.fromEntries(out.variables.map((v) => [v.name, v]));
    expect(vars.email.kind).toBe('email');
    expect(vars.amount.kind).toBe('number');
    expect(vars.target.distinct_count).toBe(3);
    expect(out.procedure.steps[1].constants).toEqual([{ name: 'plan', value: 'pro' }]);
  });
  it('aligns each trace and scores confidence from explicit factors', () => {
    const t1 = out.trace_alignment.find((a) => a.trace_id === 't1')!;
    expect(t1.order_consistency).toBe(0.75); // t1 sends the email before invoicing
    expect(out.trace_alignment.find((a) => a.trace_id === 't3')!.coverage).toBe(0.75);
    const sum = out.confidence.factors.reduce((a, f) => a + f.value * f.weight, 0);
    expect(out.confidence.score).toBeCloseTo(sum, 2);
  });
});

describe('procedural/crystallize request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, {}, 'traces');
    expectRejectsAt(ep.request, { traces: [] }, 'traces');
    expectRejectsAt(ep.request, { traces: [{ id: 't', steps: [] }] }, 'traces.0.steps');
    expectRejectsAt(ep.request, { traces: [{ id: 't', steps: [{ tool: 'x' }] }] }, 'traces.0.steps.0.action');
    expectRejectsAt(
      ep.request,
      { traces: [{ id: 't', steps: [{ action: 'a', params: [{ name: '', value: 'v' }] }] }] },
      'traces.0.steps.0.params.0.name',
    );
    expectRejectsAt(
      ep.request,
      { traces: [{ id: 't', steps: [{ action: 'a' }] }], preferences: { min_support: 2 } },
      'preferences.min_support',
    );
    expectRejectsAt(
      ep.request,
      { traces: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => ({ id: `t${i}`, steps: [{ action: 'a' }] })) },
      'traces',
    );
  });
});

const stepArb = fc.record({
  action: fc.constantFrom('open', 'edit', 'save', 'send', 'close', 'Open'),
  tool: fc.option(fc.constantFrom('A', 'B'), { nil: undefined }),
  target: fc.option(fc.constantFrom('x', 'y', '42'), { nil: undefined }),
  params: fc.option(
    fc.array(fc.record({ name: fc.constantFrom('id', 'to', 'n'), value: fc.constantFrom('1', '2', 'a@b.co') }), {
      maxLength: 3,
    }),
    { nil: undefined },
  ),
});
const reqArb = fc.record({
  intent: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
  traces: fc.array(
    fc.record({
      id: fc.constantFrom('t1', 't2', 't3', 't4'),
      outcome: fc.option(fc.constantFrom('success', 'failed'), { nil: undefined }),
      steps: fc.array(stepArb, { minLength: 1, maxLength: 8 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  preferences: fc.record(
    {
      min_support: fc.double({ min: 0, max: 1, noNaN: true }),
      max_steps: fc.integer({ min: 1, max: 5 }),
      max_variables: fc.integer({ min: 1, max: 3 }),
      max_alignments: fc.integer({ min: 1, max: 3 }),
    },
    { requiredKeys: [] },
  ),
});

describe('procedural/crystallize properties', () => {
  it('never throws, is deterministic, honours caps and keeps references valid', () => {
    fc.assert(
      fc.property(reqArb, (body) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body);
        const p = input.preferences;
        expect(out.procedure.steps.length).toBeLessThanOrEqual(p.max_steps ?? 20);
        expect(out.variables.length).toBeLessThanOrEqual(p.max_variables ?? 50);
        expect(out.trace_alignment.length).toBeLessThanOrEqual(p.max_alignments ?? 100);
        const ids = new Set(out.procedure.steps.map((s) => s.id));
        expect(ids.size).toBe(out.procedure.steps.length);
        expect(out.common_sequence).toEqual(out.procedure.steps.map((s) => s.id));
        const traceIds = new Set(input.traces.map((t) => t.id));
        for (const a of out.trace_alignment) {
          expect(traceIds.has(a.trace_id)).toBe(true);
          for (const s of a.matched_step_ids) expect(ids.has(s)).toBe(true);
        }
        const varNames = new Set(out.variables.map((v) => v.name));
        expect(varNames.size).toBe(out.variables.length);
        for (const v of out.variables) expect(ids.has(v.step_id)).toBe(true);
        for (const s of out.procedure.steps) for (const n of s.variable_names) expect(varNames.has(n)).toBe(true);
        for (const s of out.procedure.steps) expect(s.support).toBeGreaterThanOrEqual((p.min_support ?? 0.5) - 0.001);
      }),
      { numRuns: 100 },
    );
  });
});
