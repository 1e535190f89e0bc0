/**
 * The short text events and views carry for an output (`snippet`): at most `max` characters, an
 * ellipsis when cut. Whitespace runs collapse to one space unless `keepLines` (a goal's step
 * snippet stays parseable as a plan when its full output is gone). Pure: workflows may use it.
 */
export function snippetOf(text: string | null | undefined, max = 200, o: { keepLines?: boolean } = {}): string {
  const t = o.keepLines ? (text ?? '') : (text ?? '').replace(/\s+/g, ' ').trim();
  return t.length > max ? `${cutText(t, max - 1)}…` : t;
}

/**
 * At most `max` UTF-16 units of `s`, one fewer when the cut would split a surrogate pair: a lone half is what
 * PostgreSQL's jsonb refuses (and shows as U+FFFD elsewhere). Pure: workflows may use it.
 */
export function cutText(s: string, max: number): string {
  if (s.length <= max) return s;
  return s.slice(0, (s.charCodeAt(max - 1) & 0xfc00) === 0xd800 ? max - 1 : max);
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
