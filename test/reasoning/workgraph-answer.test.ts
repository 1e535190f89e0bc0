import fc from 'fast-check';
import { workgraphAnswer as ep } from '../../reasoning/workgraph-answer';
import { nowArb, workItemsArb } from './workgraph-arbitraries';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const ask = (question: string, extra: Record<string, unknown> = {}) => {
  const out = ep.compile(ep.request.parse({ ...ep.example, question, ...extra }), {});
  ep.response.parse(out);
  return out;
};

describe('POST /workgraph/answer', () => {
  test('golden: what blocks, who owns, what next, what is late', () => {
    const b = ask('What is blocking e2e?');
    expect(b.question_kind).toBe('blockers');
    expect(b.subject).toEqual({ item_id: 'e2e', owner: 'cho' });
    expect(b.answer).toMatch(/blocked by api, ui/);
    expect(b.evidence_node_ids).toEqual(['api', 'ui', 'schema']);
    const o = ask('Who owns launch?');
    expect(o).toMatchObject({ question_kind: 'owner', answer: 'launch (Launch checklist) is owned by ana.' });
    const n = ask('What should ben do next?');
    expect(n.subject.owner).toBe('ben');
    expect(n.evidence_node_ids).toEqual(['schema']);
    const l = ask('What is late?');
    expect(l.evidence_node_ids).toEqual(['docs', 'api']);
    expect(l.findings[0].detail).toMatch(/^overdue/);
    const d = ask('What depends on schema?');
    expect(d).toMatchObject({ question_kind: 'dependents', evidence_node_ids: ['api', 'e2e', 'launch'] });
    const prereq = ask('What does launch depend on?');
    expect(prereq.question_kind).toBe('blockers');
    expect(prereq.answer).toMatch(/missing dependency legal-review/);
    const cp = ask('When will we finish?');
    expect(cp.question_kind).toBe('critical_path');
    expect(cp.answer).toContain('2026-05-09T09:00:00+02:00');
    const noClock = ask('What is late?', { now: undefined });
    expect(noClock.confidence).toBeLessThan(0.5);
    expect(ask('hello', { subject: 'ben' }).subject.owner).toBe('ben');
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, { items: [{ id: 'a' }] }, 'question');
    expectRejectsAt(ep.request, { question: 'x' }, 'items');
    expectRejectsAt(ep.request, { question: '', items: [{ id: 'a' }] }, 'question');
    expectRejectsAt(ep.request, { question: 'x', items: [{ id: 'a', owner: 5 }] }, 'items.0.owner');
    expectRejectsAt(
      ep.request,
      { question: 'x', items: [{ id: 'a' }], preferences: { max_evidence: 0 } },
      'preferences.max_evidence',
    );
  });

  const question = fc.constantFrom(
    'What blocks w3?',
    'who owns w1',
    'what next for ana',
    'what is late',
    'what depends on w2',
    'who is overloaded',
    'critical path?',
    'Build api status',
    'w9 w1 ???',
    '',
  );
  test('properties: total, deterministic, valid, capped, evidence from input', () => {
    fc.assert(
      fc.property(
        workItemsArb,
        nowArb,
        question,
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(undefined, 'w2', 'ben', 'zed'),
        (items, now, q, max_evidence, subject) => {
          const input = ep.request.parse({ items, now, question: q || '?', subject, preferences: { max_evidence } });
          const out = expectCompilesCleanly(ep, input);
          expect(out.evidence_node_ids.length).toBeLessThanOrEqual(max_evidence);
          expect(out.findings.length).toBeLessThanOrEqual(max_evidence);
          const ids = new Set(items.map((i) => i.id));
          for (const id of [...out.evidence_node_ids, ...out.findings.map((f) => f.item_id)])
            expect(ids.has(id)).toBe(true);
          if (out.subject.item_id) expect(ids.has(out.subject.item_id)).toBe(true);
          expect(out.answer.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});
