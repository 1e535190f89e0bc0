import { z } from 'zod';
import { runBounded } from './bounded';
import { defineTool } from './types';

/**
 * Regular expressions with bounds: pattern ≤ 300 characters, text ≤ 20,000, at most 200
 * matches, and a hard time limit (catastrophic backtracking is stopped, not waited out).
 */
export const regexTool = defineTool({
  name: 'regex',
  description: 'Regular expressions (JavaScript syntax): test, match (all matches with groups) or replace.',
  input: z.object({
    op: z.enum(['test', 'match', 'replace']),
    pattern: z.string().min(1).max(300),
    flags: z
      .string()
      .regex(/^[imsu]*$/, 'flags may be i, m, s, u')
      .max(4)
      .default(''),
    text: z.string().max(20_000),
    replacement: z.string().max(1000).optional(),
  }),
  run({ op, pattern, flags, text, replacement }) {
    let re: RegExp;
    try {
      re = new RegExp(pattern, `${flags}g`);
    } catch (err) {
      throw new Error(`invalid pattern: ${(err as Error).message}`);
    }
    return runBounded(() => {
      if (op === 'test') return { matches: re.test(text) };
      if (op === 'replace') return { text: text.replace(re, replacement ?? '') };
      const matches: Array<{ match: string; index: number; groups: string[] }> = [];
      for (const m of text.matchAll(re)) {
        matches.push({ match: m[0], index: m.index, groups: m.slice(1).map((g) => g ?? '') });
        if (matches.length >= 200) break;
      }
      return { count: matches.length, matches };
    }, 200);
  },
});
