import { keywordSet, splitSentences } from './text-segments';

/**
 * Procedural text rules shared by the procedure compilers: which sentences describe a step,
 * how a narrated step ("then I open the invoice in Xero") becomes an imperative action, and a
 * normalised key to merge the same step seen in different sources.
 */
const SEQUENCE =
  /^(first(ly)?|then|next|after that|afterwards|finally|lastly|once (that'?s|it'?s|this is) done|step \d+[:.]?|\d+[.)])[\s,]*/i;
const NARRATED = /^(i|we|you|they|she|he)\s+(usually\s+|always\s+|then\s+|just\s+)?/i;
export const ACTION_VERB =
  /^(open|click|select|copy|paste|download|upload|export|import|send|email|check|verify|review|approve|create|update|fill|enter|type|save|submit|log ?in|sign ?in|run|start|stop|restart|deploy|merge|close|file|print|scan|attach|compare|match|reconcile|record|write|draft|call|book|schedule|assign|tag|label|archive|move|rename|delete|remove|post|publish|notify|ask|confirm|calculate|add|go|navigate|search|find|pick|pack|ship|invoice|charge|refund|back ?up|test|build|install|configure|set|clean|wait)\b/i;
const DECISION = /\b(if|unless|otherwise|in case|depending on|whether)\b/i;
const CHECK = /^(check|verify|confirm|make sure|ensure|double-check|validate)\b/i;
export const JUDGEMENT =
  /\b(judge|judgement|judgment|decide|approve|negotiate|assess|gut|feel|use common sense|depends)\b/i;

export interface RawStep {
  action: string;
  kind: 'action' | 'decision' | 'check';
  index: number;
}

const CONDITION = /^(if|when|unless|in case|otherwise)\b/i;

/** Imperative form of a narrated or cue-prefixed sentence; null when it is not a step. */
export function toAction(sentence: string): string | null {
  let s = sentence.trim().replace(/[.;]+$/, '');
  if (CONDITION.test(s) && s.includes(','))
    return (s.charAt(0).toUpperCase() + s.slice(1)).replace(/,\s*(i|we|you)\s+/i, ', ');
  const hadCue = SEQUENCE.test(s);
  s = s.replace(SEQUENCE, '');
  const narrated = NARRATED.test(s);
  s = s.replace(NARRATED, '');
  if (!s) return null;
  if (!(
    hadCue ||
    ACTION_VERB.test(s) ||
    CHECK.test(s) ||
    (narrated && /^\w+s?\b/.test(s) && ACTION_VERB.test(s.replace(/^(\w+?)s\b/, '$1')))
  ))
    return null;
  // "opens" -> "open" after a narrated third person.
  if (narrated) s = s.replace(/^(\w+?)(e?s)\b/, (m, stem: string) => (ACTION_VERB.test(stem) ? stem : m));
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function stepKind(text: string): RawStep['kind'] {
  return CHECK.test(text) ? 'check' : DECISION.test(text) ? 'decision' : 'action';
}

/** Procedural steps of a transcript, with their sentence index. */
export function transcriptSteps(transcript: string): RawStep[] {
  const out: RawStep[] = [];
  let index = 0;
  for (const line of transcript.split(/\r?\n/)) {
    for (const sentence of splitSentences(line)) {
      const a = toAction(sentence);
      if (a) out.push({ action: a, kind: stepKind(a), index });
      index++;
    }
  }
  return out;
}

/**
 * Finds an earlier step that says the same thing: at least two shared content words covering
 * 75% of the shorter step. Candidates come from an inverted word index, so matching is
 * proportional to the steps sharing a word, not to all steps.
 */
export class StepMatcher {
  private words: string[][] = [];
  private index = new Map<string, number[]>();
  /** `w` may be passed when the caller already has keywordSet(text) (see keywordSetEach). */
  add(text: string, w: string[] = keywordSet(text)): number {
    const id = this.words.length;
    this.words.push(w);
    for (const x of w) {
      const list = this.index.get(x);
      if (list) list.push(id);
      else this.index.set(x, [id]);
    }
    return id;
  }
  match(text: string, w: string[] = keywordSet(text)): number | null {
    const shared = new Map<number, number>();
    for (const x of w)
      for (const id of (this.index.get(x) ?? []).slice(0, 200)) shared.set(id, (shared.get(id) ?? 0) + 1);
    let best: number | null = null;
    let bestScore = 0;
    for (const [id, n] of shared) {
      const score = n / Math.max(1, Math.min(w.length, this.words[id].length));
      if (n >= 2 && score >= 0.75 && (score > bestScore || (score === bestScore && best !== null && id < best)))
        [best, bestScore] = [id, score];
    }
    return best;
  }
}
