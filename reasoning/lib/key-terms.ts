import { splitWords, splitWordsEach } from './text-segments';

/**
 * Key-term extraction shared by the concept-graph compilers (learning mastery, semantic memory).
 * Candidates are content unigrams and adjacent content bigrams; a term's score rewards how many
 * sentences use it (document frequency), bigrams (more specific) and terms that also appear in
 * the caller's focus text (objective, titles). All work is linear in the number of tokens plus
 * one sort over the distinct candidates.
 */
const STOP = new Set(
  (
    'a an the and or but if then else of to in on at by for with from about into over after before under ' +
    'is are was were be been being am do does did done have has had having will would shall should can could ' +
    'may might must i you he she it we they me him her us them my your his its our their this that these those ' +
    'what which who whom whose when where why how all any both each few more most other some such no nor not ' +
    'only own same so than too very just also up down out off again further once here there via per ' +
    'use uses used using make makes made get gets got often many much every called known like ' +
    'one two three first second new way ways thing things etc because while during between through within without ' +
    'however therefore thus instead rather still even yet already always never usually sometimes'
  ).split(/\s+/),
);

export function isContentWord(w: string): boolean {
  return w.length >= 3 && !STOP.has(w) && !/^\d+$/.test(w);
}

export interface SentenceRef {
  /** Caller's id for the sentence (e.g. `src-1:s3`). */
  id: string;
  text: string;
}

export interface TermStat {
  term: string;
  /** Number of words in the term (1 to 3). */
  size: number;
  tf: number;
  df: number;
  /** Index of the first sentence that uses the term. */
  first: number;
  score: number;
  /** Indexes of the sentences using the term (capped). */
  sentences: number[];
}

export interface TermIndex {
  /** Selected terms, best first. */
  terms: TermStat[];
  /** For each sentence, the ranks (indexes into `terms`) of the selected terms it contains, ascending. */
  bySentence: number[][];
}

const MAX_REFS_PER_TERM = 64;

/**
 * Candidate terms of one sentence (content unigrams, adjacent bigrams and trigrams), with repeats,
 * from its already segmented words (see splitWordsEach).
 */
export function candidateTermsOfWords(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (!isContentWord(w)) continue;
    out.push(w);
    const n = words[i + 1];
    if (n === undefined || !isContentWord(n)) continue;
    out.push(`${w} ${n}`);
    const m = words[i + 2];
    if (m !== undefined && isContentWord(m)) out.push(`${w} ${n} ${m}`);
  }
  return out;
}

/**
 * Pick the `max` best key terms of `sentences`. `focus` words (objective, titles) boost terms
 * that contain them. Terms used in only one sentence are kept only when nothing better exists.
 */
export function extractKeyTerms(sentences: SentenceRef[], max: number, focus = ''): TermIndex {
  const stats = new Map<string, TermStat>();
  const perSentence: string[][] = [];
  // One segmenter pass per batch of sentences: a segment() call per sentence made long inputs GC-bound.
  const words = splitWordsEach(sentences.map((s) => s.text));
  sentences.forEach((_, idx) => {
    const cands = candidateTermsOfWords(words[idx]);
    const seen = new Set<string>();
    for (const c of cands) {
      let st = stats.get(c);
      if (!st) {
        st = { term: c, size: c.split(' ').length, tf: 0, df: 0, first: idx, score: 0, sentences: [] };
        stats.set(c, st);
      }
      st.tf++;
      if (!seen.has(c)) {
        seen.add(c);
        st.df++;
        if (st.sentences.length < MAX_REFS_PER_TERM) st.sentences.push(idx);
      }
    }
    perSentence.push([...seen]);
  });
  const focusSeq = splitWords(focus);
  const focusWords = new Set(focusSeq.filter(isContentWord));
  // Every run of 2-3 consecutive focus words: a set lookup per term instead of a substring search
  // of the whole focus text (which grows with the number of sources: quadratic).
  const focusPhrases = new Set<string>();
  for (let i = 0; i + 1 < focusSeq.length; i++) {
    focusPhrases.add(`${focusSeq[i]} ${focusSeq[i + 1]}`);
    if (i + 2 < focusSeq.length) focusPhrases.add(`${focusSeq[i]} ${focusSeq[i + 1]} ${focusSeq[i + 2]}`);
  }
  for (const st of stats.values()) {
    // A phrase is a term only when it recurs or the caller names it.
    if (st.size > 1 && st.df < 2 && !focusPhrases.has(st.term)) {
      st.score = 0;
      continue;
    }
    const parts = st.term.split(' ');
    const focusHits = parts.filter((p) => focusWords.has(p)).length;
    st.score =
      st.df * (st.size === 3 ? 1.9 : st.size === 2 ? 1.6 : 1) * (1 + 0.75 * focusHits) +
      Math.min(st.tf - st.df, 3) * 0.1;
    if (st.df < 2 && focusHits === 0) st.score *= 0.5;
  }
  const ranked = [...stats.values()]
    .filter((st) => st.score > 0)
    .sort((a, b) => b.score - a.score || a.first - b.first || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
  const chosen: TermStat[] = [];
  // sub-phrase -> summed df of the chosen longer terms containing it
  const covered = new Map<string, number>();
  for (const st of ranked) {
    if (chosen.length >= max) break;
    // A shorter term adds little when chosen longer terms already account for most of its uses
    // ("start threshold" inside "slow start threshold"; "fast" inside "fast retransmit").
    if (st.df < (covered.get(st.term) ?? 0) * 2) continue;
    chosen.push(st);
    if (st.size > 1) for (const sub of subPhrases(st.term)) covered.set(sub, (covered.get(sub) ?? 0) + st.df);
  }
  const rankOf = new Map(chosen.map((c, i) => [c.term, i]));
  const bySentence = perSentence.map((terms) => {
    const r: number[] = [];
    for (const t of terms) {
      const k = rankOf.get(t);
      if (k !== undefined) r.push(k);
    }
    return r.sort((a, b) => a - b);
  });
  return { terms: chosen, bySentence };
}

/** Contiguous shorter phrases of a multi-word term. */
function subPhrases(term: string): string[] {
  const p = term.split(' ');
  const out: string[] = [];
  for (let len = 1; len < p.length; len++)
    for (let i = 0; i + len <= p.length; i++) out.push(p.slice(i, i + len).join(' '));
  return out;
}

export interface CoEdge {
  a: number;
  b: number;
  weight: number;
  /** First sentence index where the pair co-occurs. */
  first: number;
}

/**
 * Co-occurrence edges between selected terms (by rank), counted per sentence. Pairwise work is
 * bounded: only the `perSentence` best-ranked terms of each sentence are paired.
 */
export function coOccurrence(bySentence: number[][], perSentence = 8): CoEdge[] {
  const edges = new Map<string, CoEdge>();
  bySentence.forEach((ranks, idx) => {
    const top = ranks.slice(0, perSentence);
    for (let i = 0; i < top.length; i++)
      for (let j = i + 1; j < top.length; j++) {
        const key = `${top[i]}|${top[j]}`;
        const e = edges.get(key);
        if (e) e.weight++;
        else edges.set(key, { a: top[i], b: top[j], weight: 1, first: idx });
      }
  });
  return [...edges.values()].sort((x, y) => y.weight - x.weight || x.a - y.a || x.b - y.b);
}

export interface TermMatch {
  index: number;
  length: number;
}

/**
 * Matcher for `term` (one to three words): finds it in a text case-insensitively on word
 * boundaries. Compiling the pattern costs more than running it, and callers look up the same few
 * terms in thousands of sentences, so create one matcher per term per request and reuse it.
 */
export function termMatcher(term: string): (text: string) => TermMatch | null {
  const pattern = term
    .split(' ')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\-]+');
  const re = new RegExp(`(^|[^\\p{L}\\p{N}])(${pattern})(?![\\p{L}\\p{N}])`, 'iu');
  return (text) => {
    const m = re.exec(text);
    return m ? { index: m.index + m[1].length, length: m[2].length } : null;
  };
}
