import { allRoutes } from '../../api/routes';
import { SCOPES } from '../../schema/auth';
import { startHarness, type Harness } from '../helpers/harness';
import { jsonAt, jsonSites, withValueAt, type Json, type JsonPath } from '../helpers/json-sites';

/**
 * Names of Object.prototype members as input. Code that looks a user's word up in a plain object
 * (`TABLE[word] ?? fallback`) or counts words in one finds a function instead of its fallback, and
 * its answer then breaks its own schema (NaN scores, a lost field) or it throws. Every route with a
 * documented example is sent that example with such words as string values (each field in turn,
 * then all at once) and as object keys: nothing answers 500, and every 2xx JSON answer matches the
 * route's response schema.
 */

jest.setTimeout(180_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: true });
});
afterAll(async () => h?.close());

const WORDS = ['__proto__', 'constructor', 'toString'];

/** The example's variants: a word at each string (words taken in turn), each word at all strings, each word as a key of each object. */
function variantsOf(example: Json): Array<[string, Json]> {
  const { strings, objects } = jsonSites(example);
  const out: Array<[string, Json]> = [];
  const put = (label: string, paths: JsonPath[], word: string) => out.push([label, withValueAt(example, paths, word)]);
  strings.forEach((p, i) => put(`${WORDS[i % WORDS.length]} at ${p.join('.')}`, [p], WORDS[i % WORDS.length]));
  for (const w of WORDS) {
    if (strings.length > 1) put(`${w} at every string`, strings, w);
    for (const p of objects) {
      const body = structuredClone(example);
      // An own property named like the member, as JSON.parse makes it (plain assignment would set the prototype).
      Object.defineProperty(jsonAt(body, p), w, { value: 'x', enumerable: true, writable: true, configurable: true });
      out.push([`key ${w} in ${p.join('.') || 'the body'}`, body]);
    }
  }
  return out;
}

test('prototype member names in any field or key of any documented example: never a 500, 2xx answers match their schema', async () => {
  const key = (await h.key([...SCOPES])).apiKey;
  const problems: string[] = [];
  let sent = 0;
  for (const route of allRoutes()) {
    if (route.method === 'get' || !route.example || typeof route.example !== 'object') continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, 'x_unknown');
    for (const [label, body] of variantsOf(route.example as Json)) {
      sent++;
      const r = await h.req(route.method.toUpperCase(), path, {
        key,
        raw: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      const where = `${route.method.toUpperCase()} ${route.path}, ${label}`;
      // 502-504: an upstream this harness does not run (no model provider): not the input's fault.
      if (r.status >= 500 && ![502, 503, 504].includes(r.status))
        problems.push(`${where}: ${r.status} ${r.text.slice(0, 160)}`);
      else if (r.status < 300 && route.response && r.headers.get('content-type')?.includes('json')) {
        const v = route.response.safeParse(r.body);
        if (!v.success) problems.push(`${where}: ${r.status} answer breaks its schema: ${v.error.issues[0]?.message}`);
      }
    }
  }
  expect(problems).toEqual([]);
  // The sweep reached the routes: dozens of documented examples, each with many variants.
  expect(sent).toBeGreaterThan(500);
});
