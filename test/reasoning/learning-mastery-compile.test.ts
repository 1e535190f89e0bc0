import fc from 'fast-check';
import { learningMasteryCompile as ep } from '../../reasoning/learning-mastery-compile';
import { MAX_ITEMS } from '../../schema/reasoning/common';
import { expectCompilesCleanlyFromBody, expectRejectsAt } from './properties';

const run = (body: unknown, surface?: string) => ep.compile(ep.request.parse(body), { surface });

describe('learning/mastery/compile golden example', () => {
  const out = run(ep.example, 'learn');
  const sentence = new Map(out.source_sentences.map((s) => [s.id, s]));
  const concept = (term: string) => out.concept_graph.nodes.find((n) => n.term === term)!;

  it('extracts the key terms of the material, including multi-word terms', () => {
    const terms = out.concept_graph.nodes.map((n) => n.term);
    expect(terms).toEqual(
      expect.arrayContaining(['congestion window', 'slow start', 'slow start threshold', 'congestion avoidance']),
    );
    expect(terms).not.toContain('start threshold'); // covered by the longer term
    expect(
      out.concept_graph.edges.some(
        (e) => e.from === concept('congestion window').id && e.to === concept('slow start').id,
      ),
    ).toBe(true);
  });

  it('traces every cloze card and quiz to a real source sentence', () => {
    expect(out.flashcards.length).toBeGreaterThan(0);
    for (const card of [
      ...out.flashcards,
      ...out.quizzes.map((q) => ({ ...q, front: q.question, back: q.choices[q.answer_index] })),
    ]) {
      const s = sentence.get(card.sentence_id)!;
      expect(s.source_id).toBe(card.source_id);
      expect(card.front).toContain('_____');
      expect(s.text.toLowerCase()).toContain(card.back.toLowerCase());
    }
    // the sentence stating the misconception is not used to teach
    expect(out.flashcards.some((f) => f.sentence_id === 'lec-7:s4')).toBe(false);
  });

  it('orders the learning DAG by the explicit "builds on" cue', () => {
    const ss = concept('slow start').id;
    const ca = concept('congestion avoidance').id;
    expect(out.learning_dag.edges).toContainEqual({ from: ss, to: ca, basis: 'explicit' });
    expect(out.learning_dag.nodes.indexOf(ss)).toBeLessThan(out.learning_dag.nodes.indexOf(ca));
    expect(out.learning_dag.cycles).toEqual([]);
  });

  it('maps the reported misconception to its concept and evidence', () => {
    const m = out.misconception_map.find((x) => x.origin === 'reported')!;
    expect(m.concept_id).toBe(concept('slow start').id);
    expect(m.evidence_sentence_ids).toContain('lec-7:s4');
  });

  it('scores mastery from the ledger and schedules reviews before the deadline in the zone', () => {
    const per = new Map(out.mastery_score.per_concept.map((p) => [p.concept_id, p]));
    expect(per.get(concept('slow start').id)!.score).toBeGreaterThan(per.get(concept('congestion window').id)!.score);
    expect(per.get(concept('round trip').id)!.matched_ledger).toBe(false);
    expect(out.mastery_score.score).toBeGreaterThan(0);
    expect(out.mastery_score.score).toBeLessThan(50);
    expect(out.guided_assistance_mode.mode).toBe('scaffolded');
    expect(out.review_cadence.mode).toBe('datetime');
    expect(out.review_cadence.sessions[0].at).toBe('2026-03-02T18:00:00+01:00');
    for (const s of out.review_cadence.sessions) expect(s.at! < '2026-03-20T09:00:00+01:00').toBe(true);
    const last = out.review_cadence.sessions.at(-1)!;
    expect(last.concept_ids.length).toBe(out.concept_graph.nodes.length); // final review covers all
    // weak concepts come back sooner than strong ones
    const firstAfter0 = (id: string) =>
      out.review_cadence.sessions.find((s) => s.day_offset > 0 && s.concept_ids.includes(id))!.day_offset;
    expect(firstAfter0(concept('congestion window').id)).toBeLessThan(firstAfter0(concept('slow start').id));
  });

  it('keeps wall-clock time across a DST change and falls back to day offsets without now', () => {
    const dst = run({ ...ep.example, now: '2026-03-27T18:00:00', deadline: '2026-04-20T09:00:00' });
    const after = dst.review_cadence.sessions.find((s) => s.day_offset >= 3)!;
    expect(after.at).toMatch(/T18:00:00\+02:00$/);
    const noClock = run({ ...ep.example, now: undefined });
    expect(noClock.review_cadence.mode).toBe('day_offset');
    expect(noClock.review_cadence.sessions.every((s) => s.at === null)).toBe(true);
    expect(noClock.summary.days_until_deadline).toBeNull();
  });

  it('never hints on the surface the learner is on', () => {
    const onChat = run(ep.example, 'chat');
    expect(onChat.cross_surface_reinforcement_hints.map((h) => h.surface)).toEqual(['mobile', 'calendar']);
  });

  it('reports and breaks a prerequisite cycle', () => {
    const out2 = run({
      objective: 'loops',
      sources: [
        {
          id: 's',
          content:
            'Topic alpha requires topic beta. Topic beta requires topic alpha. Topic alpha and topic beta appear together.',
        },
      ],
    });
    expect(out2.learning_dag.cycles.length).toBe(1);
    expect(out2.learning_dag.removed_edges.length).toBe(1);
    expect(out2.learning_dag.nodes.length).toBe(out2.concept_graph.nodes.length);
  });
});

describe('learning/mastery/compile request validation', () => {
  it('names the bad field paths', () => {
    expectRejectsAt(ep.request, { objective: 'x' }, 'sources');
    expectRejectsAt(ep.request, { objective: 'x', sources: [{ id: 'a', content: 5 }] }, 'sources.0.content');
    expectRejectsAt(ep.request, { objective: 'x'.repeat(501), sources: [{ id: 'a', content: 'y' }] }, 'objective');
    expectRejectsAt(ep.request, { objective: 'x', sources: [{ id: '', content: 'y' }] }, 'sources.0.id');
    expectRejectsAt(
      ep.request,
      { objective: 'x', sources: [{ id: 'a', content: 'y' }], preferences: { max_concepts: 0 } },
      'preferences.max_concepts',
    );
    expectRejectsAt(
      ep.request,
      { objective: 'x', sources: [{ id: 'a', content: 'y'.repeat(20_001) }] },
      'sources.0.content',
    );
    const many = Array.from({ length: MAX_ITEMS + 1 }, (_, i) => ({ id: `s${i}`, content: 'a' }));
    expectRejectsAt(ep.request, { objective: 'x', sources: many }, 'sources');
    expectRejectsAt(
      ep.request,
      {
        objective: 'x',
        sources: [{ id: 'a', content: 'y' }],
        existing_ledger: { entries: [{ concept: 'a', attempts: -1 }] },
      },
      'existing_ledger.entries.0.attempts',
    );
  });
});

const vocab = [
  'kernel',
  'matrix',
  'vector',
  'space',
  'basis',
  'rank',
  'requires',
  'is',
  'the',
  'common misconception',
  'for example',
  'eigen value',
  'linear map',
];
const sentenceArb = fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 12 }).map((w) => w.join(' ') + '.');
const reqArb = fc.record({
  objective: fc.string({ minLength: 1, maxLength: 40 }),
  sources: fc.array(
    fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'd'),
      title: fc.option(fc.constantFrom('Matrix basics', 'Spaces'), { nil: undefined }),
      content: fc.array(sentenceArb, { maxLength: 8 }).map((s) => s.join(' ')),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  now: fc.option(fc.constantFrom('2026-01-05T08:00:00', '2026-03-28T22:30:00+01:00', 'garbage'), { nil: undefined }),
  deadline: fc.option(fc.constantFrom('2026-01-06T08:00:00', '2026-04-30T09:00:00', '2025-01-01T00:00:00'), {
    nil: undefined,
  }),
  timezone: fc.option(fc.constantFrom('Europe/Berlin', 'America/New_York', 'Not/AZone'), { nil: undefined }),
  preferences: fc.record(
    {
      max_concepts: fc.integer({ min: 1, max: 12 }),
      max_flashcards: fc.integer({ min: 1, max: 10 }),
      max_quizzes: fc.integer({ min: 1, max: 6 }),
      max_drills: fc.integer({ min: 1, max: 6 }),
      max_sessions: fc.integer({ min: 1, max: 5 }),
      surfaces: fc.array(fc.constantFrom('mobile', 'chat', 'web'), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
  existing_ledger: fc.record({
    entries: fc.array(
      fc.record({
        concept: fc.constantFrom(...vocab),
        attempts: fc.nat(20),
        correct: fc.nat(30),
        last_reviewed: fc.option(fc.constantFrom('2025-12-01T00:00:00', 'bad'), { nil: undefined }),
      }),
      { maxLength: 5 },
    ),
  }),
  misconceptions: fc.array(
    fc.record({
      belief: fc.constantFrom('the rank is the basis', 'kernel means matrix', 'zzz'),
      concept: fc.option(fc.constantFrom(...vocab), { nil: undefined }),
    }),
    { maxLength: 3 },
  ),
});

describe('learning/mastery/compile properties', () => {
  it('never throws, is deterministic, honours caps and keeps references valid', () => {
    fc.assert(
      fc.property(reqArb, fc.option(fc.constantFrom('chat', 'mobile'), { nil: undefined }), (body, surface) => {
        const { input, out } = expectCompilesCleanlyFromBody(ep, body, { surface });
        const p = input.preferences;
        expect(out.concept_graph.nodes.length).toBeLessThanOrEqual(p.max_concepts ?? 15);
        expect(out.flashcards.length).toBeLessThanOrEqual(p.max_flashcards ?? 40);
        expect(out.quizzes.length).toBeLessThanOrEqual(p.max_quizzes ?? 20);
        expect(out.drills.length).toBeLessThanOrEqual(p.max_drills ?? 20);
        expect(out.review_cadence.sessions.length).toBeLessThanOrEqual(p.max_sessions ?? 30);
        const concepts = new Set(out.concept_graph.nodes.map((n) => n.id));
        const sentences = new Set(out.source_sentences.map((s) => s.id));
        const sources = new Set(input.sources.map((s) => s.id));
        const items = new Set([...out.flashcards.map((f) => f.id), ...out.quizzes.map((q) => q.id)]);
        const drills = new Set(out.drills.map((d) => d.id));
        const cIds = [
          ...out.concept_graph.edges.flatMap((e) => [e.from, e.to]),
          ...out.flashcards.map((f) => f.concept_id),
          ...out.quizzes.map((q) => q.concept_id),
          ...out.drills.flatMap((d) => d.concept_ids),
          ...out.mock_assessments.flatMap((m) => m.concept_ids),
          ...out.review_cadence.sessions.flatMap((s) => s.concept_ids),
          ...out.learning_dag.nodes,
          ...out.learning_dag.edges.flatMap((e) => [e.from, e.to]),
          ...out.learning_dag.cycles.flat(),
          ...out.mastery_score.per_concept.map((c) => c.concept_id),
          ...out.cross_surface_reinforcement_hints.flatMap((h) => h.concept_ids),
          ...out.misconception_map.flatMap((m) => (m.concept_id ? [m.concept_id] : [])),
        ];
        for (const c of cIds) expect(concepts.has(c)).toBe(true);
        const sIds = [
          ...out.concept_graph.nodes.flatMap((n) => n.sentence_ids),
          ...out.concept_graph.edges.map((e) => e.sentence_id),
          ...out.flashcards.map((f) => f.sentence_id),
          ...out.quizzes.map((q) => q.sentence_id),
          ...out.drills.flatMap((d) => d.sentence_ids),
          ...out.misconception_map.flatMap((m) => m.evidence_sentence_ids),
        ];
        for (const s of sIds) expect(sentences.has(s)).toBe(true);
        for (const s of [
          ...out.source_sentences.map((x) => x.source_id),
          ...out.flashcards.map((f) => f.source_id),
          ...out.concept_graph.nodes.flatMap((n) => n.source_ids),
        ])
          expect(sources.has(s)).toBe(true);
        for (const q of out.quizzes) expect(q.choices[q.answer_index]).toBeDefined();
        for (const m of out.mock_assessments) {
          for (const i of m.item_ids) expect(items.has(i)).toBe(true);
          if (m.session_index !== null) expect(out.review_cadence.sessions[m.session_index]).toBeDefined();
        }
        for (const m of out.misconception_map) for (const d of m.drill_ids) expect(drills.has(d)).toBe(true);
        for (const s of out.review_cadence.sessions) for (const f of s.flashcard_ids) expect(items.has(f)).toBe(true);
        for (const h of out.cross_surface_reinforcement_hints)
          if (h.session_index !== null) expect(out.review_cadence.sessions[h.session_index]).toBeDefined();
        expect(out.cross_surface_reinforcement_hints.some((h) => h.surface === surface)).toBe(false);
      }),
      { numRuns: 80 },
    );
  });
});
