import { defineReasoning } from './types';
import {
  learningMasteryRequest,
  learningMasteryResponse,
  type LearningMasteryRequest,
  type LearningMasteryResponse,
} from '../schema/reasoning/learning-mastery-compile';
import { splitSentencesEach, slug, clip } from './lib/text-segments';
import { coOccurrence, extractKeyTerms, termMatcher, type SentenceRef } from './lib/key-terms';
import { topoOrder } from './lib/topo-order';
import { parseInstant, resolveZone } from './lib/luxon-time';
import { conceptMastery, reviewCadence, round, type LedgerLike } from './lib/learning-study';
import { buildArtifacts } from './lib/learning-artifacts';

type Res = LearningMasteryResponse;

const PREREQ_CUE =
  /\b(requires?|depends? on|builds? on|is based on|relies on|assumes|extends|is a (?:kind|type|form) of)\b/i;

export function compileLearningMastery(input: LearningMasteryRequest, ctx: { surface?: string }): Res {
  const prefs = input.preferences;
  const zone = resolveZone(input.timezone);
  const now = parseInstant(input.now, zone);
  const deadline = parseInstant(input.deadline, zone);

  // 1. Sentences with stable ids `<source id>:s<n>`.
  const sentences: (SentenceRef & { source: string; index: number })[] = [];
  const seenSource = new Set<string>();
  const distinct: typeof input.sources = [];
  for (const src of input.sources) {
    if (seenSource.has(src.id)) continue; // first source with an id wins
    seenSource.add(src.id);
    distinct.push(src);
  }
  splitSentencesEach(distinct.map((src) => src.content)).forEach((list, k) =>
    list.forEach((text, index) =>
      sentences.push({ id: `${distinct[k].id}:s${index}`, text, source: distinct[k].id, index }),
    ),
  );
  const focus = [input.objective, ...input.sources.map((s) => s.title ?? '')].join(' . ');
  const maxConcepts = prefs.max_concepts ?? 15;
  const { terms, bySentence } = extractKeyTerms(sentences, maxConcepts, focus);
  const topScore = terms[0]?.score || 1;
  const conceptIds = terms.map((t, i) => `c${i + 1}-${slug(t.term)}`);
  const rankByTerm = new Map(terms.map((t, i) => [t.term, i]));

  // 2. Concept graph: co-occurrence within a sentence.
  const co = coOccurrence(bySentence).slice(0, Math.max(4 * terms.length, 1));
  const neighbors: number[][] = terms.map(() => []);
  for (const e of co) {
    neighbors[e.a].push(e.b);
    neighbors[e.b].push(e.a);
  }

  // 3. Learning DAG: explicit prerequisite cues win; otherwise the concept used first comes first.
  const explicit = new Map<string, { from: number; to: number }>();
  const explicitPairs = new Set<string>();
  const matchTerm = terms.map((t) => termMatcher(t.term)); // compiled once per request
  bySentence.forEach((ranks, idx) => {
    if (ranks.length < 2) return;
    const text = sentences[idx].text;
    const cue = PREREQ_CUE.exec(text);
    if (!cue) return;
    // The subject (first concept before the cue) builds on the first concept after it.
    let dep = -1,
      pre = -1,
      depPos = Infinity,
      prePos = Infinity;
    for (const r of ranks.slice(0, 8)) {
      const pos = matchTerm[r](text);
      if (!pos) continue;
      if (pos.index < cue.index && pos.index < depPos) [dep, depPos] = [r, pos.index];
      if (pos.index > cue.index && pos.index < prePos) [pre, prePos] = [r, pos.index];
    }
    if (dep < 0 || pre < 0 || dep === pre) return;
    explicitPairs.add(dep < pre ? `${dep}|${pre}` : `${pre}|${dep}`);
    explicit.set(`${pre}>${dep}`, { from: pre, to: dep }); // both directions may be stated: a real cycle
  });
  const dagEdges: { from: string; to: string; basis: 'explicit' | 'first_use' }[] = [];
  for (const e of [...explicit.values()].sort((a, b) => a.from - b.from || a.to - b.to)) {
    dagEdges.push({ from: conceptIds[e.from], to: conceptIds[e.to], basis: 'explicit' });
  }
  for (const e of co) {
    if (explicitPairs.has(`${e.a}|${e.b}`)) continue;
    const [f, t] = terms[e.a].first <= terms[e.b].first ? [e.a, e.b] : [e.b, e.a];
    dagEdges.push({ from: conceptIds[f], to: conceptIds[t], basis: 'first_use' });
  }
  const priority = terms
    .map((t, i) => ({ i, first: t.first }))
    .sort((a, b) => a.first - b.first || a.i - b.i)
    .map((x) => conceptIds[x.i]);
  const topo = topoOrder(priority, dagEdges);
  const removedSet = new Set(topo.removed);

  // 4. Mastery from the ledger.
  const ledger = new Map<string, LedgerLike>();
  for (const e of input.existing_ledger.entries) {
    const key = e.concept.trim().toLowerCase();
    const prev = ledger.get(key);
    const last = parseInstant(e.last_reviewed, zone);
    if (!prev)
      ledger.set(key, {
        concept: key,
        attempts: e.attempts,
        correct: e.correct,
        last_reviewed: last,
        confidence: e.confidence,
      });
    else {
      prev.attempts += e.attempts;
      prev.correct += e.correct;
      if (last && (!prev.last_reviewed || last > prev.last_reviewed)) prev.last_reviewed = last;
    }
  }
  const mastery = terms.map((t) => conceptMastery(ledger.get(t.term), now));
  const weights = terms.map((t) => t.score / topScore);
  const wSum = weights.reduce((a, b) => a + b, 0) || 1;
  const matched = mastery.filter((m) => m.matched);
  const coverage = terms.length ? matched.length / terms.length : 0;
  const accuracy = matched.length ? matched.reduce((a, m) => a + (m.accuracy ?? 0), 0) / matched.length : 0;
  const withRet = matched.filter((m) => m.retention !== null);
  const retention = withRet.length ? withRet.reduce((a, m) => a + (m.retention ?? 0), 0) / withRet.length : 1;
  const weighted = mastery.reduce((a, m, i) => a + m.score * weights[i], 0) / wSum;
  const score = round(Math.min(100, Math.max(0, 100 * weighted)), 1);

  // 5. Review cadence.
  const maxSessions = prefs.max_sessions ?? 30;
  const cadence = reviewCadence({
    concepts: terms.map((t, i) => ({ id: conceptIds[i], mastery: mastery[i].score })),
    base: now,
    deadline,
    maxSessions,
  });
  const daysUntil = now && deadline ? round(deadline.diff(now, 'days').days, 1) : null;

  // 6. Assistance mode.
  let mode: 'scaffolded' | 'coached' | 'independent' =
    score < 35 ? 'scaffolded' : score < 70 ? 'coached' : 'independent';
  let reason = `mastery ${score}/100 with ${Math.round(coverage * 100)}% of concepts practised`;
  if (prefs.assistance && prefs.assistance !== 'auto') {
    mode = prefs.assistance;
    reason = 'requested in preferences';
  } else if (daysUntil !== null && daysUntil <= 2 && mode === 'scaffolded') {
    mode = 'coached';
    reason += `; deadline in ${daysUntil} days leaves no time for full worked examples`;
  }
  const hintPolicy =
    mode === 'scaffolded'
      ? 'show a worked example first, then fade hints one step at a time'
      : mode === 'coached'
        ? 'ask for recall first; give a hint after one wrong attempt'
        : 'retrieval only; reveal answers after the attempt';

  const art = buildArtifacts({
    terms,
    conceptIds,
    sentences,
    bySentence,
    neighbors,
    rankByTerm,
    prefs,
    order: topo.order,
    misconceptions: input.misconceptions,
    mastery: mastery.map((m) => m.score),
  });

  const sessionsOut = cadence.sessions.map((s) => {
    const due = new Set(s.concept_ids);
    const cards = art.flashcards.filter((f) => due.has(f.concept_id)).map((f) => f.id);
    return {
      ...s,
      minutes: prefs.session_minutes ?? Math.min(60, Math.max(10, 5 + 2 * s.concept_ids.length)),
      flashcard_ids: cards,
    };
  });
  const mocks = art.mockAssessments(sessionsOut.length);

  // 7. Cross-surface reinforcement (never on the surface the learner is already on).
  const here = (ctx.surface ?? input.surface ?? '').toLowerCase();
  const weakest = terms
    .map((_, i) => i)
    .sort((a, b) => mastery[a].score - mastery[b].score || a - b)
    .slice(0, 5)
    .map((i) => conceptIds[i]);
  const surfaces = [
    ...new Set((prefs.surfaces ?? ['mobile', 'chat', 'calendar', 'email']).map((s) => s.toLowerCase())),
  ].filter((s) => s && s !== here);
  const firstSession = sessionsOut.length ? 0 : null;
  const hints = weakest.length
    ? surfaces.map((s) => ({
        surface: s,
        concept_ids: s === 'chat' ? weakest.slice(0, 1) : weakest,
        session_index: s === 'calendar' || s === 'email' ? firstSession : null,
        action:
          s === 'mobile'
            ? 'offer the due flashcards of these concepts as a 5-minute burst'
            : s === 'chat'
              ? 'ask the learner to explain this concept in their own words before answering related questions'
              : s === 'calendar'
                ? 'block the review sessions of the cadence as focus time'
                : s === 'email'
                  ? 'send a digest of the due concepts before each review session'
                  : 'surface one recall question about these concepts',
      }))
    : [];

  // 8. Every referenced sentence, once.
  const used = new Set<number>();
  const sentIdx = new Map(sentences.map((s, i) => [s.id, i]));
  const nodes = terms.map((t, i) => ({
    id: conceptIds[i],
    term: t.term,
    weight: round(weights[i]),
    source_ids: [...new Set(t.sentences.map((s) => sentences[s].source))].slice(0, 10),
    sentence_ids: t.sentences.slice(0, 5).map((s) => sentences[s].id),
  }));
  const edges = co.map((e) => ({
    from: conceptIds[e.a],
    to: conceptIds[e.b],
    weight: e.weight,
    sentence_id: sentences[e.first].id,
  }));
  const mark = (id: string) => {
    const k = sentIdx.get(id);
    if (k !== undefined) used.add(k);
  };
  nodes.forEach((n) => n.sentence_ids.forEach(mark));
  edges.forEach((e) => mark(e.sentence_id));
  art.flashcards.forEach((f) => mark(f.sentence_id));
  art.quizzes.forEach((q) => mark(q.sentence_id));
  art.drills.forEach((d) => d.sentence_ids.forEach(mark));
  art.misconceptionMap.forEach((m) => m.evidence_sentence_ids.forEach(mark));

  return {
    summary: {
      objective: input.objective,
      text:
        `${terms.length} concepts from ${seenSource.size} sources; mastery ${score}/100; ` +
        `${sessionsOut.length} review sessions` +
        (daysUntil !== null ? ` before the deadline in ${daysUntil} days` : ''),
      source_count: seenSource.size,
      sentence_count: sentences.length,
      concept_count: terms.length,
      top_concepts: terms.slice(0, 5).map((t) => t.term),
      days_until_deadline: daysUntil,
    },
    source_sentences: [...used]
      .sort((a, b) => a - b)
      .map((k) => ({
        id: sentences[k].id,
        source_id: sentences[k].source,
        index: sentences[k].index,
        text: clip(sentences[k].text, 400),
      })),
    concept_graph: { nodes, edges },
    flashcards: art.flashcards,
    drills: art.drills,
    quizzes: art.quizzes,
    mock_assessments: mocks,
    misconception_map: art.misconceptionMap,
    review_cadence: {
      mode: now ? 'datetime' : 'day_offset',
      timezone: now ? (zone ?? now.zoneName ?? null) : null,
      sessions: sessionsOut,
    },
    mastery_score: {
      score,
      per_concept: terms.map((_, i) => ({
        concept_id: conceptIds[i],
        score: mastery[i].score,
        attempts: mastery[i].attempts,
        matched_ledger: mastery[i].matched,
      })),
      factors: [
        { name: 'weighted_concept_mastery', value: round(weighted), weight: 1 },
        { name: 'ledger_coverage', value: round(coverage), weight: 0 },
        { name: 'ledger_accuracy', value: round(accuracy), weight: 0 },
        { name: 'retention', value: round(retention), weight: 0 },
      ],
    },
    guided_assistance_mode: { mode, reason, hint_policy: hintPolicy },
    learning_dag: {
      nodes: topo.order,
      edges: dagEdges.filter((e) => !removedSet.has(e)),
      cycles: topo.cycles,
      removed_edges: topo.removed.map((e) => ({ from: e.from, to: e.to })),
    },
    cross_surface_reinforcement_hints: hints,
  };
}

export const learningMasteryCompile = defineReasoning({
  path: '/learning/mastery/compile',
  summary: 'Compile study material into a concept graph, traced flashcards/quizzes, drills and a review cadence.',
  request: learningMasteryRequest,
  response: learningMasteryResponse,
  compile: compileLearningMastery,
  example: {
    objective: 'Understand TCP congestion control for the networking exam',
    surface: 'learn',
    now: '2026-03-02T18:00:00',
    deadline: '2026-03-20T09:00:00',
    timezone: 'Europe/Berlin',
    sources: [
      {
        id: 'lec-7',
        kind: 'notes',
        title: 'Lecture 7: congestion control',
        content:
          'Congestion control limits how fast a sender injects packets into the network. ' +
          'The congestion window is the number of bytes a sender may have in flight. ' +
          'Slow start doubles the congestion window every round trip until it reaches the slow start threshold. ' +
          'Congestion avoidance builds on slow start and grows the congestion window by one segment per round trip. ' +
          'A common misconception is that slow start is slow; in fact the congestion window grows exponentially. ' +
          'Fast retransmit resends a segment after three duplicate acknowledgements, for example when one packet is lost.',
      },
      {
        id: 'rfc-5681',
        kind: 'article',
        title: 'RFC 5681 summary',
        content:
          'The slow start threshold decides whether slow start or congestion avoidance is used. ' +
          'When a timeout occurs, the slow start threshold is set to half of the congestion window. ' +
          'Fast recovery depends on fast retransmit and keeps the congestion window from collapsing.',
      },
    ],
    existing_ledger: {
      entries: [
        { concept: 'slow start', attempts: 6, correct: 5, last_reviewed: '2026-02-27T20:00:00' },
        { concept: 'congestion window', attempts: 4, correct: 1, last_reviewed: '2026-02-20T20:00:00' },
      ],
    },
    misconceptions: [{ concept: 'slow start', belief: 'slow start grows the window linearly' }],
    preferences: { max_concepts: 8, max_flashcards: 10, surfaces: ['mobile', 'chat', 'calendar'] },
  },
});
