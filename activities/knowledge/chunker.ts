/** Splits extracted text into search chunks: paragraph- and sentence-aware, ~`target` characters each. */
export function chunkText(text: string, opts: { target?: number; max?: number } = {}): string[] {
  const target = opts.target ?? 900;
  const max = Math.max(opts.max ?? 1400, target);
  const normalized = text.replace(/\r\n?/g, '\n').replace(/[ \t\f\v]+/g, ' ');
  const paragraphs = normalized
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim())
    .filter(Boolean);
  const pieces: string[] = [];
  for (const p of paragraphs) {
    if (p.length <= max) pieces.push(p);
    else pieces.push(...splitLong(p, target, max));
  }
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (!current) current = piece;
    else if (current.length + 2 + piece.length <= target) current += `\n\n${piece}`;
    else {
      chunks.push(current);
      current = piece;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

/** A paragraph longer than `max`: pack sentences, then hard-split words that still do not fit. */
function splitLong(p: string, target: number, max: number): string[] {
  const sentences = p
    .match(/[^.!?。]+(?:[.!?。]+["')\]]*\s*|$)/g)
    ?.map((s) => s.trim())
    .filter(Boolean) ?? [p];
  const out: string[] = [];
  let current = '';
  const push = (s: string) => {
    if (s.length <= max) {
      out.push(s);
      return;
    }
    for (let i = 0; i < s.length; i += max) {
      let end = Math.min(s.length, i + max);
      if (end < s.length) {
        const space = s.lastIndexOf(' ', end);
        if (space > i + max / 2) end = space;
      }
      out.push(s.slice(i, end).trim());
      i = end - max;
    }
  };
  for (const s of sentences) {
    if (!current) current = s;
    else if (current.length + 1 + s.length <= target) current += ` ${s}`;
    else {
      push(current);
      current = s;
    }
  }
  if (current) push(current);
  return out.filter(Boolean);
}
