import { z } from 'zod';
import { defineTool } from './types';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`invalid JSON: ${(err as Error).message}`);
  }
}

/** `a.b[0].c` → ['a', 'b', 0, 'c'] */
function pathParts(path: string): Array<string | number> {
  const parts: Array<string | number> = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) parts.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  return parts;
}

export const jsonTool = defineTool({
  name: 'json',
  description: 'JSON utilities: validate, format (pretty or minified), get a value by path (a.b[0]), list keys.',
  input: z.object({
    op: z.enum(['validate', 'format', 'minify', 'get', 'keys']),
    text: z.string().max(100_000),
    path: z.string().max(200).optional(),
  }),
  run({ op, text, path }) {
    if (op === 'validate') {
      try {
        JSON.parse(text);
        return { valid: true };
      } catch (err) {
        return { valid: false, error: (err as Error).message };
      }
    }
    const value = parseJson(text);
    if (op === 'format') return { text: JSON.stringify(value, null, 2) };
    if (op === 'minify') return { text: JSON.stringify(value) };
    if (op === 'keys') return { keys: value && typeof value === 'object' ? Object.keys(value).slice(0, 500) : [] };
    let cur: unknown = value;
    for (const p of pathParts(path ?? '')) {
      if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, p)) return { found: false };
      cur = (cur as Record<string | number, unknown>)[p];
    }
    return { found: true, value: cur };
  },
});
