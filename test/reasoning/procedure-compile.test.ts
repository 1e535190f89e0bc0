import fc from 'fast-check';
import { procedureCompile as ep } from '../../reasoning/procedure-compile';
import { splitSentences } from '../../reasoning/lib/text-segments';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('procedure/compile golden example', () => {
  const out = run(ep.example);
  const steps = out.sop.steps;
  it('turns narrated sentences into ordered imperative steps and merges matching observations', () => {
    expect(steps.map((s) => s.action)).toEqual([
      'Export the bank statement from Online Banking as CSV',
      'Open the unpaid invoices in Xero',
      'Match each payment to an invoice by amount and reference',
      'If an amount differs, decide whether to write it off or chase the customer',
      'Send the reconciliation report to Dana by email',
    ]);
    expect(steps[2].evidence).toEqual([
      { source: 'transcript', index: 2 },
      { source: 'observation', index: 0 },
    ]);
    expect(steps[0].tool).toBe('Online Banking');
    expect(steps[3].kind).toBe('decision');
  });
  it('gates automation on the decision and the partial outcome', () => {
    expect(out.automation_readiness.blockers).toContainEqual({
      step_id: steps[3].id,
      reason: 'branching decision needs an explicit rule',
    });
    expect(out.automation_readiness.blockers.some((b) => /partial/.test(b.reason))).toBe(true);
    expect(out.automation_readiness.unlisted_tools).toEqual(['Online Banking']);
    expect(out.skill_tier_seed.tier).toBe('assisted');
    expect(out.skill_tier_seed.automate_first).not.toContain(steps[3].id);
    const total = out.automation_readiness.factors.reduce((a, f) => a + f.value * f.weight, 0);
    expect(out.automation_readiness.score).toBeCloseTo(total * 100, 0);
  });
  it('checks constraints, outputs and the success signal', () => {
    const texts = out.checklist.map((c) => c.text);
    expect(texts).toContain('Constraint respected: never write off more than 50 EUR without approval');
    expect(texts).toContain('Success signal seen: all invoices matched or flagged');
  });
});

describe('procedure/compile request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, {}, 'title');
    expectRejectsAt(ep.request, { title: 't', tools: 'Xero' }, 'tools');
    expectRejectsAt(ep.request, { title: 't', observations: [{ detail: 'x' }] }, 'observations.0.title');
    expectRejectsAt(ep.request, { title: 't', observations: [{ title: 'x', tags: [3] }] }, 'observations.0.tags.0');
    expectRejectsAt(ep.request, { title: 't', transcript: 'x'.repeat(20_001) }, 'transcript');
    expectRejectsAt(ep.request, { title: 't', preferences: { max_steps: 501 } }, 'preferences.max_steps');
  });
});

const sentence = fc.tuple(
  fc.constantFrom('First ', 'Then I ', 'We ', 'If it fails, I ', 'Random ', 'Finally '),
  fc.constantFrom('open the report in Excel', 'send the file via email', 'check totals', 'approve the run', 'banana'),
  fc.constantFrom('.', '. ', '!\n'),
);
const reqArb = fc.record({
  title: fc.string({ minLength: 1, maxLength: 30 }),
  transcript: fc.option(
    fc.array(sentence, { maxLength: 10 }).map((a) => a.map((t) => t.join('')).join(' ')),
    { nil: undefined },
  ),
  tools: fc.array(fc.constantFrom('Excel', 'email', 'c++', '(weird'), { maxLength: 3 }),
  inputs: fc.array(fc.constantFrom('file'), { maxLength: 1 }),
  outputs: fc.array(fc.constantFrom('report'), { maxLength: 1 }),
  frequency: fc.option(fc.constantFrom('daily', 'weekly', 'yearly'), { nil: undefined }),
  observations: fc.array(
    fc.record({
      title: fc.constantFrom('Open the report', 'Check totals twice', 'Approve'),
      tool: fc.option(fc.constantFrom('Excel', 'Jira'), { nil: undefined }),
      outcome: fc.option(fc.constantFrom('success', 'failed'), { nil: undefined }),
    }),
    { maxLength: 6 },
  ),
  preferences: fc.record({ max_steps: fc.integer({ min: 1, max: 6 }) }, { requiredKeys: [] }),
});

describe('procedure/compile properties', () => {
  it('never throws, is deterministic, honours max_steps and keeps references valid', () => {
    fc.assert(
      fc.property(reqArb, (body) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body);
        expect(out.sop.steps.length).toBeLessThanOrEqual(input.preferences.max_steps ?? 30);
        expect(out.sop.steps.length).toBeGreaterThan(0);
        const ids = new Set(out.sop.steps.map((s) => s.id));
        const sentences = (input.transcript ?? '').split(/\r?\n/).reduce((a, l) => a + splitSentences(l).length, 0);
        for (const s of out.sop.steps)
          for (const e of s.evidence)
            expect(
              e.source === 'observation' ? e.index < input.observations.length : e.index < Math.max(1, sentences),
            ).toBe(true);
        for (const id of [
          ...out.checklist.flatMap((c) => (c.step_id ? [c.step_id] : [])),
          ...out.skill_candidate.step_ids,
          ...out.skill_tier_seed.automate_first,
          ...out.automation_readiness.blockers.flatMap((b) => (b.step_id ? [b.step_id] : [])),
        ])
          expect(ids.has(id)).toBe(true);
        expect(out.automation_readiness.score).toBeGreaterThanOrEqual(0);
        expect(out.automation_readiness.score).toBeLessThanOrEqual(100);
      }),
      { numRuns: 100 },
    );
  });
});
