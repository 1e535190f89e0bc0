import { reasoningEndpoints } from '../../reasoning/registry';
import type { ReasoningEndpoint } from '../../reasoning/types';
import { jsonSites, withValueAt, type Json } from '../helpers/json-sites';
import { expectCompilesCleanlyFromBody } from './properties';

/**
 * Words that name members of Object.prototype. A compiler that looks a user's word up in a plain
 * object (`TABLE[word] ?? fallback`) finds a function for them instead of its fallback, and its
 * answer then fails the response schema (a NaN score, sent as null; a function as an intent): a 200 that
 * breaks its own contract on valid input.
 */
const PROTOTYPE_WORDS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

const endpoints = reasoningEndpoints();

describe.each(endpoints.map((e) => [e.path, e] as [string, ReasoningEndpoint]))('%s', (_path, e) => {
  test('a prototype member name in any string field is rejected or compiles into a valid response', () => {
    const example = e.example as Json;
    const sites = jsonSites(example).strings;
    let compiled = 0;
    for (const word of PROTOTYPE_WORDS)
      // Each string field alone, then all of them at once.
      for (const paths of [...sites.map((p) => [p]), sites]) {
        const body = withValueAt(example, paths, word);
        if (!e.request.safeParse(body).success) continue; // a 400 at the API: fine
        compiled++;
        expectCompilesCleanlyFromBody(e, body);
      }
    // Most single-field replacements are valid requests: the check is exercised, not vacuously true.
    expect(compiled).toBeGreaterThan(sites.length);
  });
});
