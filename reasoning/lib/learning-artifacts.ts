import { clip, splitWordsEach } from './text-segments';
import { candidateTermsOfWords, termMatcher, type TermMatch, type TermStat } from './key-terms';

/**
 * Study artifacts of the learning-mastery compiler, each traced to the source sentence it came
 * from: cloze flashcards, multiple-choice quizzes (distractors are graph neighbours absent from
 * the sentence), drills, the misconception map and mock assessments.
 */
const DEFINITION = /\b(is|are|means|refers to|is defined as|describes|decides|limits)\b/i;
const EXAMPLE = /\b(for example|for instance|e\.g\.|such as)\b/i;
const CONTRAST = /\b(not|never|rather than|instead of|unlike|in fact|misconception|mistake|confused)\b/i;
const MISCONCEPTION =
  /\b(common (mistake|misconception|error)|misconception|often confused|contrary to popular belief|is not the same as)\b/i;

interface Sentence {
  id: string;
  text: string;
  source: string;
}

export interface ArtifactInput {
  terms: TermStat[];
  conceptIds: string[];
  sentences: Sentence[];
  bySentence: number[][];
  neighbors: number[][];
  rankByTerm: Map<string, number>;
  order: string[];
  mastery: number[];
  misconceptions: { id?: string; concept?: string; belief: string; correction?: string }[];
  prefs: { max_flashcards?: number; max_quizzes?: number; max_drills?: number };
}

type Matcher = (text: string) => TermMatch | null;

/** Position of the term `own` matches in `text`, ignoring places where it is only part of a longer concept (`supers`). */
function findOwn(text: string, own: Matcher, supers: Matcher[]): TermMatch | null {
  let masked = text;
  for (const sup of supers) {
    for (let k = 0, pos = sup(masked); pos && k < 20; k++, pos = sup(masked))
      masked = masked.slice(0, pos.index) + '#'.repeat(pos.length) + masked.slice(pos.index + pos.length);
  }
  return own(masked);
}

/** Sentences of a concept, best candidates for a card first (definitional, medium length, few other concepts). */
function rankSentences(t: TermStat, own: Matcher, supers: Matcher[], inp: ArtifactInput): number[] {
  const scored = t.sentences.map((s) => {
    const text = inp.sentences[s].text;
    const words = text.split(/\s+/).length;
    const pos = findOwn(text, own, supers);
    let score = 0;
    if (!pos) score -= 10;
    if (DEFINITION.test(text)) score += 2;
    if (MISCONCEPTION.test(text)) score -= 3; // never teach from the sentence that states the wrong belief
    if (pos && pos.index < text.length / 2) score += 0.5;
    if (words >= 6 && words <= 40) score += 1;
    score -= 0.1 * Math.max(0, inp.bySentence[s].length - 1);
    return { s, score };
  });
  return scored
    .filter((x) => x.score > -5)
    .sort((a, b) => b.score - a.score || a.s - b.s)
    .map((x) => x.s);
}

function cloze(text: string, own: Matcher, supers: Matcher[]): { front: string; answer: string } | null {
  const pos = findOwn(text, own, supers);
  if (!pos) return null;
  return {
    front: clip(text.slice(0, pos.index) + '_____' + text.slice(pos.index + pos.length), 400),
    answer: text.slice(pos.index, pos.index + pos.length),
  };
}

export function buildArtifacts(inp: ArtifactInput) {
  const { terms, conceptIds, sentences } = inp;
  const padded = terms.map((t) => ` ${t.term} `);
  const match = terms.map((t) => termMatcher(t.term)); // compiled once per request
  const supers = terms.map((t) => match.filter((_, k) => terms[k].size > t.size && padded[k].includes(` ${t.term} `)));
  const ranked = terms.map((t, i) => rankSentences(t, match[i], supers[i], inp));
  const maxCards = inp.prefs.max_flashcards ?? 40;
  const maxQuiz = inp.prefs.max_quizzes ?? 20;
  const maxDrills = inp.prefs.max_drills ?? 20;

  const flashcards: {
    id: string;
    concept_id: string;
    front: string;
    back: string;
    source_id: string;
    sentence_id: string;
  }[] = [];
  for (let round = 0; round < 3 && flashcards.length < maxCards; round++) {
    for (let i = 0; i < terms.length && flashcards.length < maxCards; i++) {
      const s = ranked[i][round];
      if (s === undefined) continue;
      const c = cloze(sentences[s].text, match[i], supers[i]);
      if (!c) continue;
      flashcards.push({
        id: `fc-${flashcards.length + 1}`,
        concept_id: conceptIds[i],
        front: c.front,
        back: c.answer,
        source_id: sentences[s].source,
        sentence_id: sentences[s].id,
      });
    }
  }

  const quizzes: {
    id: string;
    concept_id: string;
    question: string;
    choices: string[];
    answer_index: number;
    source_id: string;
    sentence_id: string;
  }[] = [];
  for (let i = 0; i < terms.length && quizzes.length < maxQuiz; i++) {
    const s = ranked[i][1] ?? ranked[i][0];
    if (s === undefined) continue;
    const c = cloze(sentences[s].text, match[i], supers[i]);
    if (!c) continue;
    const present = new Set(inp.bySentence[s]);
    const distractors: number[] = [];
    for (const n of [...inp.neighbors[i], ...terms.map((_, k) => k)]) {
      if (distractors.length >= 3) break;
      if (
        n !== i &&
        !present.has(n) &&
        !distractors.includes(n) &&
        !terms[n].term.includes(terms[i].term) &&
        !terms[i].term.includes(terms[n].term)
      )
        distractors.push(n);
    }
    if (!distractors.length) continue;
    const choices = [terms[i].term, ...distractors.map((d) => terms[d].term)].sort();
    quizzes.push({
      id: `qz-${quizzes.length + 1}`,
      concept_id: conceptIds[i],
      question: `Which term completes the sentence? ${c.front}`,
      choices,
      answer_index: choices.indexOf(terms[i].term),
      source_id: sentences[s].source,
      sentence_id: sentences[s].id,
    });
  }

  // Drills interleave define / connect / apply so a short list still mixes the kinds.
  const drills: {
    id: string;
    kind: 'define' | 'connect' | 'apply';
    concept_ids: string[];
    prompt: string;
    sentence_ids: string[];
  }[] = [];
  const define = terms.map((t, i) => ({ i, s: ranked[i][0] })).filter((x) => x.s !== undefined);
  const connect: { a: number; b: number; s: number }[] = [];
  const seenPair = new Set<string>();
  for (let i = 0; i < terms.length; i++)
    for (const b of inp.neighbors[i].slice(0, 2)) {
      const key = i < b ? `${i}|${b}` : `${b}|${i}`;
      if (seenPair.has(key)) continue;
      seenPair.add(key);
      const s = terms[i].sentences.find((x) => inp.bySentence[x].includes(b));
      if (s !== undefined) connect.push({ a: Math.min(i, b), b: Math.max(i, b), s });
    }
  const apply = terms
    .map((t, i) => ({ i, s: t.sentences.find((x) => EXAMPLE.test(sentences[x].text)) }))
    .filter((x) => x.s !== undefined);
  for (let k = 0; drills.length < maxDrills && (k < define.length || k < connect.length || k < apply.length); k++) {
    const d = define[k];
    if (d && drills.length < maxDrills)
      drills.push({
        id: `dr-${drills.length + 1}`,
        kind: 'define',
        concept_ids: [conceptIds[d.i]],
        prompt: `Explain "${terms[d.i].term}" in your own words, then check against the source.`,
        sentence_ids: [sentences[d.s!].id],
      });
    const c = connect[k];
    if (c && drills.length < maxDrills)
      drills.push({
        id: `dr-${drills.length + 1}`,
        kind: 'connect',
        concept_ids: [conceptIds[c.a], conceptIds[c.b]],
        prompt: `How does "${terms[c.a].term}" relate to "${terms[c.b].term}"?`,
        sentence_ids: [sentences[c.s].id],
      });
    const a = apply[k];
    if (a && drills.length < maxDrills)
      drills.push({
        id: `dr-${drills.length + 1}`,
        kind: 'apply',
        concept_ids: [conceptIds[a.i]],
        prompt: `Work through the example for "${terms[a.i].term}" and predict the outcome before reading it.`,
        sentence_ids: [sentences[a.s!].id],
      });
  }
  const drillsByConcept = new Map<string, string[]>();
  for (const d of drills)
    for (const c of d.concept_ids) drillsByConcept.set(c, [...(drillsByConcept.get(c) ?? []), d.id]);

  // Misconceptions: reported ones matched to a concept; detected ones from cue sentences.
  // Candidate terms of each misconception's concept (or belief) and belief, from one segmenter pass.
  const misTerms = splitWordsEach(inp.misconceptions.flatMap((m) => [m.concept ? m.concept : m.belief, m.belief])).map(
    candidateTermsOfWords,
  );
  const conceptOf = (cands: string[]): number | null => {
    let best: number | null = null;
    for (const c of cands) {
      const r = inp.rankByTerm.get(c);
      if (r !== undefined && (best === null || r < best)) best = r;
    }
    return best;
  };
  type MisItem = {
    id: string;
    origin: 'reported' | 'detected';
    concept_id: string | null;
    belief: string;
    correction: string | null;
    evidence_sentence_ids: string[];
    drill_ids: string[];
  };
  const misconceptionMap: MisItem[] = inp.misconceptions.map((m, k) => {
    const r = conceptOf(misTerms[2 * k]) ?? (m.concept ? conceptOf(misTerms[2 * k + 1]) : null);
    const evidence = r === null ? [] : terms[r].sentences.filter((s) => CONTRAST.test(sentences[s].text)).slice(0, 3);
    if (r !== null && !evidence.length && ranked[r][0] !== undefined) evidence.push(ranked[r][0]);
    const cid = r === null ? null : conceptIds[r];
    return {
      id: m.id ?? `mc-${k + 1}`,
      origin: 'reported',
      concept_id: cid,
      belief: m.belief,
      correction: m.correction ?? (evidence.length ? clip(sentences[evidence[0]].text, 300) : null),
      evidence_sentence_ids: evidence.map((s) => sentences[s].id),
      drill_ids: cid ? (drillsByConcept.get(cid) ?? []) : [],
    };
  });
  const usedIds = new Set(misconceptionMap.map((m) => m.id));
  let detected = 0;
  const reportedEvidence = new Set(misconceptionMap.flatMap((m) => m.evidence_sentence_ids));
  for (let s = 0; s < sentences.length && detected < 10; s++) {
    const cue = MISCONCEPTION.exec(sentences[s].text);
    if (!cue || reportedEvidence.has(sentences[s].id)) continue;
    detected++;
    // The concept named right after the cue is the one misunderstood.
    let r: number | undefined = inp.bySentence[s][0];
    let bestPos = Infinity;
    for (const k of inp.bySentence[s].slice(0, 8)) {
      const pos = match[k](sentences[s].text);
      if (pos && pos.index >= cue.index && pos.index < bestPos) [r, bestPos] = [k, pos.index];
    }
    let id = `mc-detected-${detected}`;
    while (usedIds.has(id)) id += 'x';
    usedIds.add(id);
    const cid = r === undefined ? null : conceptIds[r];
    misconceptionMap.push({
      id,
      origin: 'detected',
      concept_id: cid,
      belief: clip(sentences[s].text, 300),
      correction: null,
      evidence_sentence_ids: [sentences[s].id],
      drill_ids: cid ? (drillsByConcept.get(cid) ?? []) : [],
    });
  }

  /** A mid-way checkpoint on the first half of the study order, then a final mock on everything. */
  const mockAssessments = (sessionCount: number) => {
    const itemsFor = (concepts: Set<string>) => {
      const q = quizzes.filter((x) => concepts.has(x.concept_id)).map((x) => x.id);
      const quizzed = new Set(quizzes.filter((x) => concepts.has(x.concept_id)).map((x) => x.concept_id));
      const f = flashcards.filter((x) => concepts.has(x.concept_id) && !quizzed.has(x.concept_id)).map((x) => x.id);
      return [...q, ...f].slice(0, 20);
    };
    const out: {
      id: string;
      title: string;
      item_ids: string[];
      concept_ids: string[];
      minutes: number;
      session_index: number | null;
    }[] = [];
    const half = new Set(inp.order.slice(0, Math.ceil(inp.order.length / 2)));
    const all = new Set(inp.order);
    const plan: [string, Set<string>, number | null][] = [];
    if (inp.order.length >= 4)
      plan.push(['Checkpoint: foundations', half, sessionCount ? Math.floor((sessionCount - 1) / 2) : null]);
    plan.push(['Final mock assessment', all, sessionCount ? sessionCount - 1 : null]);
    for (const [title, set, session] of plan) {
      const items = itemsFor(set);
      if (!items.length) continue;
      out.push({
        id: `mock-${out.length + 1}`,
        title,
        item_ids: items,
        concept_ids: inp.order.filter((c) => set.has(c)),
        minutes: Math.max(5, Math.round(items.length * 1.5)),
        session_index: session,
      });
    }
    return out;
  };
  return { flashcards, quizzes, drills, misconceptionMap, mockAssessments };
}
