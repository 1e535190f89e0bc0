import fc from 'fast-check';
import { reasoningEndpoints } from '../../reasoning/registry';
import type { ReasoningEndpoint } from '../../reasoning/types';
import { expectCompilesCleanlyFromBody } from './properties';

/**
 * One property for every structured-reasoning endpoint in the registry: its documented example
 * with one to four mutations at random places (a field dropped, a list emptied, cut, reversed,
 * duplicated or scaled, a string emptied, replaced by arbitrary Unicode, extended or repeated, a
 * date-time shifted, moved into a DST gap or made invalid, a number replaced by an edge value, a
 * boolean flipped), with or without a surface, either fails request validation
 * (fine: the API answers 400) or compiles without throwing, deterministically, into an output
 * that passes the response schema.
 */

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const HAS_OFFSET = /(?:[zZ]|[+-]\d{2}:?\d{2})$/;

/** Date-time variants: DST gaps and overlaps, far past and future, offsets, invalid dates, words. */
const ODD_DATES = [
  '2026-03-29T02:30:00', // Europe: a wall-clock time that does not exist
  '2026-10-25T02:30:00', // Europe: a wall-clock time that happens twice
  '2026-03-08T02:30:00-05:00',
  '2026-02-30T10:00:00', // invalid day
  '2026-04-27',
  '2026-04-27T09:00:00+14:00',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  'tomorrow',
  '',
];
const ODD_TEXT = [
  ' ',
  '\n\n',
  '?',
  'İstanbul ǅ ß ﬁ',
  '🙂🙂',
  '  -  ',
  '1.',
  '##',
  'Ünïcödé café. Second sentence?',
  'a\u0301',
  'e.g. Dr. Smith said: "no."',
  '__proto__', // names of Object.prototype members (see prototype-keys.test.ts)
  'constructor',
];

/** One mutation: where (an index into the value sites), what (kind), and the material it may use. */
interface Mutation {
  site: number;
  kind: number;
  text: string;
  num: number;
  minutes: number;
  k: number;
}

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  site: fc.nat(),
  kind: fc.nat(),
  text: fc.string({ unit: 'grapheme', maxLength: 30 }),
  num: fc.oneof(
    fc.constantFrom(0, -1, 1, 0.5, 1e9, -1e9, Number.MAX_SAFE_INTEGER),
    fc.integer({ min: -1000, max: 100_000 }),
    fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  ),
  minutes: fc.integer({ min: -60 * 24 * 400, max: 60 * 24 * 400 }),
  k: fc.integer({ min: 2, max: 12 }),
});

type Json = unknown;
type Site = { parent: Record<string, Json> | Json[]; key: string | number };

/** Every value below the root, with its parent and key (parents before children). */
function sites(root: Json): Site[] {
  const out: Site[] = [];
  const walk = (v: Json) => {
    if (Array.isArray(v))
      v.forEach((x, i) => {
        out.push({ parent: v, key: i });
        walk(x);
      });
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        out.push({ parent: v as Record<string, Json>, key: k });
        walk(x);
      }
  };
  walk(root);
  return out;
}

function shiftDate(v: string, minutes: number): string {
  const t = Date.parse(ISO_DATE.test(v) ? `${v}T00:00:00Z` : HAS_OFFSET.test(v) ? v : `${v}Z`);
  if (Number.isNaN(t)) return v;
  const iso = new Date(t + minutes * 60_000).toISOString();
  return ISO_DATE.test(v) ? iso.slice(0, 10) : iso.slice(0, 19);
}

function mutateString(v: string, m: Mutation): string {
  if ((ISO_DATE_TIME.test(v) || ISO_DATE.test(v)) && m.kind % 2 === 0)
    return m.kind % 4 === 0 ? shiftDate(v, m.minutes) : ODD_DATES[m.kind % ODD_DATES.length];
  switch (m.kind % 6) {
    case 0:
      return '';
    case 1:
      return m.text;
    case 2:
      return `${v}${m.text}`;
    case 3:
      return Array.from({ length: m.k }, () => v).join(' ');
    case 4: {
      const odd = ODD_TEXT[m.kind % ODD_TEXT.length];
      return `${odd}${v}${odd}`;
    }
    default:
      return v.toUpperCase();
  }
}

function mutateList(v: Json[], m: Mutation): Json[] {
  switch (m.kind % 5) {
    case 0:
      return [];
    case 1:
      return v.slice(0, 1);
    case 2:
      return [...v].reverse();
    case 3:
      return [...v, ...structuredClone(v)]; // duplicate ids, repeated references
    default:
      return Array.from({ length: m.k }, () => structuredClone(v)).flat();
  }
}

/** The example with the mutations applied one after the other (sites recomputed after each). */
function applyMutations(example: Json, mutations: Mutation[]): Json {
  const root = structuredClone(example);
  for (const m of mutations) {
    const all = sites(root);
    if (!all.length) break;
    const { parent, key } = all[m.site % all.length];
    const v = (parent as Record<string | number, Json>)[key];
    if (!Array.isArray(parent) && m.kind % 5 === 0) {
      delete parent[key as string]; // drop the field (optional or not)
      continue;
    }
    let next: Json = v;
    if (typeof v === 'string') next = mutateString(v, m);
    else if (typeof v === 'number') next = m.num;
    else if (typeof v === 'boolean') next = !v;
    else if (Array.isArray(v)) next = mutateList(v, m);
    (parent as Record<string | number, Json>)[key] = next;
  }
  return root;
}

const endpoints = reasoningEndpoints();

test('the registry lists all 23 endpoints, each with a distinct path', () => {
  expect(endpoints).toHaveLength(23);
  expect(new Set(endpoints.map((e) => e.path)).size).toBe(23);
});

describe.each(endpoints.map((e) => [e.path, e] as [string, ReasoningEndpoint]))('%s', (_path, e) => {
  test('its example is valid and a mutated example is rejected or compiles into a valid response', () => {
    expect(e.request.safeParse(e.example).success).toBe(true);
    let compiled = 0;
    fc.assert(
      fc.property(
        fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
        fc.option(fc.constantFrom('studio', 'chat', 'mobile', 'calendar', 'email', '')),
        (mutations, surface) => {
          const body = applyMutations(e.example, mutations);
          if (!e.request.safeParse(body).success) return; // a 400 at the API: fine
          compiled++;
          expectCompilesCleanlyFromBody(e, body, surface === null ? {} : { surface });
        },
      ),
      { numRuns: Number(process.env.REASONING_FUZZ_RUNS ?? 40) }, // raise locally to search longer
    );
    // A few mutations at a time keep most bodies valid requests: the property is exercised, not
    // vacuously true.
    expect(compiled).toBeGreaterThanOrEqual(10);
  });
});
