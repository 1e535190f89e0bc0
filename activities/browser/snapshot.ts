import { diffLines } from 'diff';
import { estimateTokenCount } from '../commons/token-estimate';
import type { LiveSession } from './host';

const REF = /\[ref=([a-z0-9]+)\]/g;

export function refsOf(text: string): string[] {
  return [...text.matchAll(REF)].map((m) => m[1]);
}

/** The line holding `[ref=<ref>]` and every deeper-indented line under it, or undefined. */
export function subtree(text: string, ref: string): string | undefined {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.includes(`[ref=${ref}]`));
  if (at < 0) return undefined;
  const indent = /^\s*/.exec(lines[at])![0].length;
  let end = at + 1;
  while (end < lines.length && /^\s*/.exec(lines[end])![0].length > indent) end++;
  return lines
    .slice(at, end)
    .map((l) => l.slice(indent))
    .join('\n');
}

/** Cuts at a line boundary so no ref is split. */
export function truncate(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  const cut = text.lastIndexOf('\n', maxChars);
  return { text: text.slice(0, cut > 0 ? cut : maxChars), truncated: true };
}

/** Only the lines that changed, `+ ` added and `- ` removed. */
export function lineDiff(before: string, after: string): string {
  const out: string[] = [];
  for (const part of diffLines(before, after)) {
    if (!part.added && !part.removed) continue;
    for (const line of part.value.replace(/\n$/, '').split('\n')) out.push(`${part.added ? '+' : '-'} ${line}`);
  }
  return out.join('\n');
}

/**
 * Takes the page's accessibility snapshot (Playwright's `ai` mode: refs, iframes included) and
 * remembers it as the session's current refs. Refs resolve against this latest snapshot.
 */
export async function takeSnapshot(live: LiveSession, depth?: number): Promise<{ full: string; previous: string }> {
  const previous = live.lastSnapshot;
  const full = await live.page.ariaSnapshot({ mode: 'ai', depth, timeout: 30_000 });
  live.lastSnapshot = full;
  live.refs = new Set(refsOf(full));
  live.snapshotNav = live.navigations;
  return { full, previous };
}

export async function snapshotView(
  live: LiveSession,
  o: { ref?: string; depth?: number; maxChars: number; diff: boolean },
): Promise<
  | { text: string; truncated: boolean; token_estimate: number; chars: number; refs: string[]; diff: boolean }
  | { missingRef: string }
> {
  const { full, previous } = await takeSnapshot(live, o.depth);
  let text = full;
  if (o.ref) {
    const sub = subtree(full, o.ref);
    if (sub === undefined) return { missingRef: o.ref };
    text = sub;
  }
  if (o.diff) text = previous ? lineDiff(previous, full) : full;
  const cut = truncate(text, o.maxChars);
  return {
    text: cut.text,
    truncated: cut.truncated,
    token_estimate: estimateTokenCount(cut.text),
    chars: text.length,
    refs: [...live.refs],
    diff: o.diff,
  };
}
