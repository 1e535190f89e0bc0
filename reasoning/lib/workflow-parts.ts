import { keywordSet, splitWords } from './text-segments';

/**
 * Building blocks of the workflow-grammar compiler that are not graph work: id assignment,
 * reference keys, placeholder extraction, rule-to-step matching and destructive-verb inference.
 */

/** Case- and spacing-insensitive key used to match needs/approvals against ids, titles, signals. */
export const normKey = (s: string): string => s.toLowerCase().replace(/\s+/g, ' ').trim();

/** Unique ids: the requested one (or a fallback), suffixed with the position when taken. */
export function assignIds(
  requested: readonly (string | undefined)[],
  fallback: (i: number) => string,
  reserved: string[],
): string[] {
  const used = new Set(reserved);
  return requested.map((r, i) => {
    let id = r ?? fallback(i);
    if (used.has(id)) id = `${id}-${i + 1}`;
    for (let k = 2; used.has(id); k++) id = `${r ?? fallback(i)}-${i + 1}-${k}`;
    used.add(id);
    return id;
  });
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]{1,80})\s*\}\}/g;

/** Names of `{{placeholder}}` variables in `text`, in first-seen order. */
export function placeholders(text: string | undefined): string[] {
  if (!text) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(PLACEHOLDER)) out.add(m[1]);
  return [...out];
}

const DESTRUCTIVE_VERBS = new Set([
  'delete',
  'remove',
  'drop',
  'purge',
  'wipe',
  'erase',
  'destroy',
  'truncate',
  'overwrite',
  'revoke',
  'terminate',
  'deprovision',
]);

/** True when the step's wording starts with or contains a destructive verb. */
export function looksDestructive(title: string): boolean {
  return hasDestructiveVerb(splitWords(title));
}

/** looksDestructive over already segmented words (see splitWordsEach). */
export function hasDestructiveVerb(words: readonly string[]): boolean {
  return words.some((w) => DESTRUCTIVE_VERBS.has(w));
}

const ALL_WORDS = new Set(['*', 'all', 'any', 'always', 'every step', 'everything', 'all steps', 'each step']);

export interface RuleTarget {
  keys: string[];
  /** Unique content words of the target (short lists). */
  words: readonly string[];
  destructive: boolean;
}

/**
 * Which targets an approval rule's `when` selects: everything ("*", "all"), destructive steps
 * ("destructive"), an exact id/title/tool, or else every target whose words contain all of the
 * rule's content words (looked up through an inverted index, never a scan per rule and target).
 */
export function makeRuleMatcher(targets: readonly RuleTarget[]): (when: string) => number[] {
  const exact = new Map<string, number[]>();
  const postings = new Map<string, number[]>();
  targets.forEach((t, i) => {
    t.keys.forEach((k, j) => {
      if (t.keys.indexOf(k) !== j) return; // each distinct key once
      const list = exact.get(k) ?? [];
      list.push(i);
      exact.set(k, list);
    });
    for (const w of t.words) {
      const list = postings.get(w) ?? [];
      list.push(i);
      postings.set(w, list);
    }
  });
  return (when: string) => {
    const key = normKey(when);
    if (!key) return [];
    if (ALL_WORDS.has(key)) return targets.map((_, i) => i);
    if (/\bdestructive\b/.test(key)) return targets.flatMap((t, i) => (t.destructive ? [i] : []));
    const hit = exact.get(key);
    if (hit) return hit;
    const words = keywordSet(key);
    if (words.length === 0) return [];
    const lists = words.map((w) => postings.get(w) ?? []);
    lists.sort((a, b) => a.length - b.length);
    return lists[0].filter((i) => words.every((w) => targets[i].words.includes(w)));
  };
}
