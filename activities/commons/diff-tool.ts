import { createTwoFilesPatch, diffWordsWithSpace } from 'diff';
import { z } from 'zod';
import { runBounded } from './bounded';
import { defineTool } from './types';

export const diffTool = defineTool({
  name: 'diff',
  description: 'Compares two texts: a unified line diff, or word-level changes.',
  input: z.object({
    a: z.string().max(50_000),
    b: z.string().max(50_000),
    mode: z.enum(['lines', 'words']).default('lines'),
  }),
  run({ a, b, mode }) {
    return runBounded(() => {
      if (mode === 'lines') return { patch: createTwoFilesPatch('a', 'b', a, b, '', '', { context: 3 }) };
      const changes = diffWordsWithSpace(a, b)
        .filter((c) => c.added || c.removed)
        .slice(0, 500)
        .map((c) => ({ op: c.added ? 'added' : 'removed', text: c.value }));
      return { changes };
    }, 500);
  },
});
