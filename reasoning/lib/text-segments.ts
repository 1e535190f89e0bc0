/**
 * Sentence and word segmentation shared by the text-rule compilers. Uses Intl.Segmenter
 * (ICU, deterministic for a given Node build) instead of hand-written punctuation splits,
 * so abbreviations, quotes and non-Latin scripts are handled by the platform.
 */
const sentenceSeg = new Intl.Segmenter('en', { granularity: 'sentence' });
const wordSeg = new Intl.Segmenter('en', { granularity: 'word' });

/** Sentences of `text`, trimmed, empty ones dropped. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const s of sentenceSeg.segment(text)) {
    const t = s.segment.trim();
    if (t) out.push(t);
  }
  return out;
}

/**
 * Batches for the *Each functions: consecutive texts joined by line breaks, up to about 64K
 * characters per segmenter pass (a longer text is a batch of its own). `ends[k]` is where text
 * `from + k` ends in the joined string.
 */
function eachBatch(texts: readonly string[], run: (from: number, joined: string, ends: number[]) => void): void {
  for (let from = 0; from < texts.length;) {
    const ends: number[] = [];
    let pos = 0;
    let to = from;
    do {
      pos += texts[to].length;
      ends.push(pos);
      pos += 1;
      to++;
    } while (to < texts.length && pos + texts[to].length <= 65_536);
    run(from, texts.slice(from, to).join('\n'), ends);
    from = to;
  }
}

/**
 * splitSentences of many texts with one segmenter pass per batch: the texts are joined by line
 * breaks, which always end a sentence (UAX #29 SB4) and are trimmed away, so each text gets
 * exactly the sentences it gets alone. One `segment()` call per text is the costly part of long
 * lists (each call clones an ICU break iterator that only the garbage collector frees).
 */
export function splitSentencesEach(texts: readonly string[]): string[][] {
  const out: string[][] = texts.map(() => []);
  eachBatch(texts, (from, joined, ends) => {
    let k = 0;
    for (const s of sentenceSeg.segment(joined)) {
      while (k < ends.length - 1 && s.index > ends[k]) k++;
      const t = s.segment.trim();
      if (t) out[from + k].push(t);
    }
  });
  return out;
}

/** Word-like tokens of `text`, lower-cased. */
export function splitWords(text: string): string[] {
  const out: string[] = [];
  for (const s of wordSeg.segment(text)) if (s.isWordLike) out.push(s.segment.toLowerCase());
  return out;
}

/**
 * splitWords of many texts with one segmenter pass per batch: the texts are joined by line
 * breaks, and word boundaries never cross a line break (UAX #29 WB3a/WB3b), so each text gets
 * exactly the words it gets alone.
 */
export function splitWordsEach(texts: readonly string[]): string[][] {
  const out: string[][] = texts.map(() => []);
  eachBatch(texts, (from, joined, ends) => {
    let k = 0;
    for (const s of wordSeg.segment(joined)) {
      if (!s.isWordLike) continue;
      while (s.index >= ends[k]) k++;
      out[from + k].push(s.segment.toLowerCase());
    }
  });
  return out;
}

const STOP = new Set(
  (
    'a an the and or but if then else of to in on at by for with from about into over after before ' +
    'is are was were be been being am do does did done have has had having will would shall should can could ' +
    'may might must i you he she it we they me him her us them my your his its our their this that these those ' +
    'what which who whom whose when where why how all any both each few more most other some such no nor not ' +
    'only own same so than too very just also up down out off again further once here there s t ll re ve d m ' +
    "let lets let's ok okay yes yeah yep sure thanks thank please hi hello hey get got go going gonna want need " +
    'think know like well really maybe one two now today tomorrow still as'
  ).split(/\s+/),
);

/** Content word (as kept by contentWords): not a stop word, at least 3 characters, not purely numeric. */
const isContent = (w: string) => w.length >= 3 && !STOP.has(w) && !/^\d+$/.test(w);

/** Content words: word-like, not a stop word, at least 3 characters, not purely numeric. */
export function contentWords(text: string): string[] {
  return splitWords(text).filter(isContent);
}

/** Unique content words, in first-seen order. */
export function keywordSet(text: string): string[] {
  return [...new Set(contentWords(text))];
}

/** keywordSet over already segmented words (see splitWordsEach): unique content words, in first-seen order. */
export function keywordsOfWords(words: readonly string[]): string[] {
  return [...new Set(words.filter(isContent))];
}

/** keywordSet of each text, with one segmenter pass (see splitWordsEach). */
export function keywordSetEach(texts: readonly string[]): string[][] {
  return splitWordsEach(texts).map(keywordsOfWords);
}

/** Clip `text` to `max` characters on a word boundary, adding an ellipsis when clipped. */
export function clip(text: string, max = 160): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const sp = cut.lastIndexOf(' ');
  return (sp > max / 2 ? cut.slice(0, sp) : cut) + '…';
}

/** Lower-case slug for ids: letters/digits joined by '-', at most 40 chars, never empty. */
export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return s || 'x';
}

/** Small counts written as words ("three times a week", "in two days"). */
export const NUMBER_WORDS: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
