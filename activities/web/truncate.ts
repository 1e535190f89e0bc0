import { estimateTokenCount } from '../commons/token-estimate';

/** Splits Markdown/text into blocks (blank-line separated), keeping fenced code blocks whole. */
export function splitBlocks(content: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fenced = false;
  for (const line of content.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (!fenced && line.trim() === '') {
      if (current.length) blocks.push(current.join('\n'));
      current = [];
    } else current.push(line);
  }
  if (current.length) blocks.push(current.join('\n'));
  return blocks;
}

/**
 * The longest prefix of whole blocks within `maxTokens` (at least the first block's start when
 * even that is too long: then it is cut at a line, else a word, boundary).
 */
export function truncateBlocks(
  content: string,
  maxTokens?: number,
): { content: string; tokens: number; truncated: boolean } {
  const total = estimateTokenCount(content);
  if (!maxTokens || total <= maxTokens) return { content, tokens: total, truncated: false };
  const kept: string[] = [];
  for (const block of splitBlocks(content)) {
    const next = [...kept, block].join('\n\n');
    if (estimateTokenCount(next) > maxTokens) break;
    kept.push(block);
  }
  let out = kept.join('\n\n');
  if (!out) {
    // One oversized first block: cut it at a word boundary.
    const words = content.split(/(\s+)/);
    let acc = '';
    for (const w of words) {
      if (estimateTokenCount(acc + w) > maxTokens) break;
      acc += w;
    }
    out = acc.trimEnd();
  }
  return { content: out, tokens: estimateTokenCount(out), truncated: true };
}
