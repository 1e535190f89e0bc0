/**
 * The short text events and views carry for an output (`snippet`): at most `max` characters, an
 * ellipsis when cut. Whitespace runs collapse to one space unless `keepLines` (a goal's step
 * snippet stays parseable as a plan when its full output is gone). Pure: workflows may use it.
 */
export function snippetOf(text: string | null | undefined, max = 200, o: { keepLines?: boolean } = {}): string {
  const t = o.keepLines ? (text ?? '') : (text ?? '').replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** Text made safe inside HTML text and attribute values (search highlights, share pages). */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
