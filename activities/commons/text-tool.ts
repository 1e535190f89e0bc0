import { z } from 'zod';
import { defineTool } from './types';

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

export const textTool = defineTool({
  name: 'text',
  description:
    'Text utilities: stats (characters, words, lines, sentences), upper, lower, title case, slug, trim, truncate.',
  input: z.object({
    op: z.enum(['stats', 'upper', 'lower', 'title', 'slug', 'trim', 'truncate']),
    text: z.string().max(100_000),
    length: z.number().int().min(1).max(100_000).optional().describe('truncate: maximum characters'),
  }),
  run({ op, text, length }) {
    switch (op) {
      case 'stats':
        return {
          characters: text.length,
          words: words(text).length,
          lines: text === '' ? 0 : text.split(/\r?\n/).length,
          sentences: text.split(/[.!?]+(?:\s|$)/).filter((s) => s.trim()).length,
        };
      case 'upper':
        return { text: text.toUpperCase() };
      case 'lower':
        return { text: text.toLowerCase() };
      case 'title':
        return {
          text: text.toLowerCase().replace(/(^|\s)(\p{L})/gu, (_m, s: string, c: string) => s + c.toUpperCase()),
        };
      case 'slug':
        return {
          text: text
            .normalize('NFKD')
            .replace(/[\u0300-\u036f]/g, '')
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-+|-+$/g, '')
            .slice(0, 200),
        };
      case 'trim':
        return { text: text.trim().replace(/[ \t]+/g, ' ') };
      case 'truncate':
        return { text: text.length > (length ?? 280) ? `${text.slice(0, Math.max(0, (length ?? 280) - 1))}…` : text };
    }
  },
});
