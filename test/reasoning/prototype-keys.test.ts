import { reasoningEndpoints } from '../../reasoning/registry';
import type { ReasoningEndpoint } from '../../reasoning/types';
import { expectCompilesCleanlyFromBody } from './properties';

/**
 * Words that name members of Object.prototype. A compiler that looks a user's word up in a plain
 * object (`TABLE[word] ?? fallback`) finds a function for them instead of its fallback, and its
 * answer then fails the response schema (a NaN score, sent as null; a function as an intent): a 200 that
 * breaks its own contract on valid input.
 */
const PROTOTYPE_WORDS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = Array<string | number>;

/** The path of every string value in `v`. */
function stringSites(v: Json, path: Path = [], out: Path[] = []): Path[] {
  if (typeof v === 'string') out.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => stringSites(x, [...path, i], out));
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) stringSites(v[k], [...path, k], out);
  return out;
}

/** A copy of `root` with the string at each of `paths` replaced by `word`. */
function withWord(root: Json, paths: Path[], word: string): Json {
  const copy = structuredClone(root);
  for (const p of paths) {
    let parent = copy as Record<string | number, Json>;
    for (const k of p.slice(0, -1)) parent = parent[k] as Record<string | number, Json>;
    parent[p[p.length - 1]] = word;
  }
  return copy;
}

const endpoints = reasoningEndpoints();

describe.each(endpoints.map((e) => [e.path, e] as [string, ReasoningEndpoint]))('%s', (_path, e) => {
  test('a prototype member name in any string field is rejected or compiles into a valid response', () => {
    const example = e.example as Json;
    const sites = stringSites(example);
    let compiled = 0;
    for (const word of PROTOTYPE_WORDS)
      // Each string field alone, then all of them at once.
      for (const paths of [...sites.map((p) => [p]), sites]) {
        const body = withWord(example, paths, word);
        if (!e.request.safeParse(body).success) continue; // a 400 at the API: fine
        compiled++;
        expectCompilesCleanlyFromBody(e, body);
      }
    // Most single-field replacements are valid requests: the check is exercised, not vacuously true.
    expect(compiled).toBeGreaterThan(sites.length);
  });
});
