/**
 * A small sentiment lexicon (deterministic, no model): words scored +1 / -1, a negator within the
 * two previous words flips the sign. A text's score is (pos − neg) / (pos + neg) in [-1, 1];
 * texts without any lexicon word are not scored (they say nothing about mood).
 */
const POSITIVE = new Set([
  'good',
  'great',
  'excellent',
  'amazing',
  'awesome',
  'love',
  'loved',
  'like',
  'liked',
  'nice',
  'happy',
  'glad',
  'thanks',
  'thank',
  'helpful',
  'perfect',
  'wonderful',
  'fantastic',
  'brilliant',
  'clear',
  'useful',
  'works',
  'worked',
  'fixed',
  'solved',
  'easy',
  'fast',
  'beautiful',
  'calm',
  'excited',
  'enjoy',
  'enjoyed',
  'appreciate',
  'best',
  'cool',
  'fun',
  'success',
  'win',
  'yes',
]);
const NEGATIVE = new Set([
  'bad',
  'terrible',
  'awful',
  'horrible',
  'hate',
  'hated',
  'wrong',
  'broken',
  'bug',
  'bugs',
  'error',
  'errors',
  'fail',
  'failed',
  'failing',
  'slow',
  'confusing',
  'confused',
  'useless',
  'annoying',
  'angry',
  'sad',
  'frustrated',
  'frustrating',
  'stuck',
  'worst',
  'crash',
  'crashed',
  'problem',
  'problems',
  'issue',
  'worse',
  'ugly',
  'difficult',
  'hard',
  'tired',
  'stressed',
  'worried',
  'no',
]);
const NEGATORS = new Set([
  'not',
  "don't",
  'dont',
  "didn't",
  'didnt',
  "isn't",
  'isnt',
  'never',
  "wasn't",
  'wasnt',
  "doesn't",
  'doesnt',
  'no',
]);

export function sentimentOf(text: string): number | undefined {
  const words = text.toLowerCase().match(/[a-z']+/g) ?? [];
  let pos = 0;
  let neg = 0;
  words.slice(0, 2000).forEach((w, i) => {
    const base = POSITIVE.has(w) ? 1 : NEGATIVE.has(w) && w !== 'no' ? -1 : 0;
    if (!base) return;
    const negated = NEGATORS.has(words[i - 1] ?? '') || NEGATORS.has(words[i - 2] ?? '');
    if ((negated ? -base : base) > 0) pos++;
    else neg++;
  });
  return pos + neg === 0 ? undefined : (pos - neg) / (pos + neg);
}

/** Mean score and how many texts carried any sentiment. */
export function sentimentOfAll(texts: readonly string[]): { mean: number; n: number } {
  let sum = 0;
  let n = 0;
  for (const t of texts) {
    const s = sentimentOf(t);
    if (s !== undefined) {
      sum += s;
      n++;
    }
  }
  return { mean: n ? sum / n : 0, n };
}
