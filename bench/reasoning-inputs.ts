/**
 * Realistic, deterministic request bodies for the structured-reasoning benchmark: an endpoint's
 * documented example with its lists of objects grown to n items. Copies are not just renamed:
 * - prose fields (a string with at least four spaces) get fresh text of the same length, made of
 *   sentences of 10-30 words drawn from a Zipf-like vocabulary with function words, names, numbers
 *   and questions, so word- and sentence-level code sees text like real notes, not "title 123";
 * - short titles and names get a suffix plus two vocabulary words;
 * - ids, paths and names (and every reference to them, e.g. `needs`, `deps`, `item_id`) get the
 *   copy's cycle suffix, so each cycle of copies repeats the example's graph of references;
 * - ISO date-times move by a per-item offset (same for all fields of an item, at most two days).
 * Every list of objects at the top level (or one level down, e.g. `existing_ledger.entries`)
 * grows together; a list whose schema caps it below n stays at the largest of n, 1000, 100, 10 and
 * its original size that the request schema accepts.
 */
import { DateTime } from 'luxon';
import type { z } from 'zod';
import type { ReasoningEndpoint } from '../reasoning/types';
import { rng } from './helpers';

export type Obj = Record<string, unknown>;

const FUNCTION_WORDS = (
  'the a an and or but of to in on at by for with from about into over after before is are was were be been ' +
  'has have had will would should can could may might must it its this that these those we they you he she our ' +
  'their not no if then when while so as than also just only more most some any each every which who what'
).split(' ');

const CONTENT_WORDS = (
  'review send check open write build schedule deploy update draft plan test ship fix migrate approve invoice ' +
  'customer report budget meeting deadline project release feature customer server database query index cache ' +
  'window packet sender receiver network latency throughput congestion threshold retransmit timeout segment ' +
  'dashboard metrics churn revenue pipeline contract proposal design prototype sprint backlog ticket support ' +
  'onboarding training workshop interview candidate hiring roadmap milestone quarter launch campaign audience ' +
  'analysis summary outline chapter thesis paper lecture exam concept theory example definition question answer ' +
  'garden kitchen budget travel flight hotel booking passport doctor appointment insurance payment account ' +
  'password security backup storage upload download export import spreadsheet document template calendar reminder ' +
  'requires depends uses relies extends includes contains measures reduces increases improves replaces supports ' +
  'quickly carefully later usually often slow fast large small critical important urgent optional manual automatic ' +
  'weekly daily monthly morning evening afternoon team manager engineer designer writer editor analyst partner vendor'
).split(/\s+/);

const NAMES = (
  'Priya Dana Sam Ana Maya Chen Omar Lena Tom Ravi Sofia Jonas Aisha Marco Yuki Elena Noah Ines Kofi Mei ' +
  'Acme Northwind Globex Initech Umbrella Contoso Lisbon Berlin Paris Toronto Nairobi Osaka Kubernetes Postgres Stripe Xero'
).split(' ');

/** Long tail of pseudo-words (deterministic syllable combinations). */
const TAIL: string[] = (() => {
  const syl = [
    'ka',
    'lo',
    'ren',
    'ta',
    'mi',
    'sor',
    'vel',
    'dun',
    'pra',
    'ist',
    'on',
    'ex',
    'qua',
    'bri',
    'mol',
    'te',
    'zan',
    'fir',
  ];
  const out: string[] = [];
  const r = rng(42);
  for (let i = 0; i < 2500; i++) {
    const n = 2 + Math.floor(r() * 3);
    let w = '';
    for (let k = 0; k < n; k++) w += syl[Math.floor(r() * syl.length)];
    out.push(w);
  }
  return out;
})();

function contentWord(r: () => number): string {
  // Zipf-like: the real words form the frequent head, pseudo-words the long tail.
  const u = r();
  if (u < 0.6) return CONTENT_WORDS[Math.floor(Math.pow(r(), 1.6) * CONTENT_WORDS.length)];
  return TAIL[Math.floor(Math.pow(r(), 2) * TAIL.length)];
}

/** One sentence of 10 to 30 words. */
function sentence(r: () => number): string {
  const n = 10 + Math.floor(r() * 21);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    const u = r();
    let w =
      u < 0.42
        ? FUNCTION_WORDS[Math.floor(r() * FUNCTION_WORDS.length)]
        : u < 0.47
          ? NAMES[Math.floor(r() * NAMES.length)]
          : u < 0.5
            ? String(Math.floor(r() * 500))
            : contentWord(r);
    if (i > 2 && i < n - 2 && r() < 0.06) w += ',';
    words.push(w);
  }
  words[0] = words[0].charAt(0).toUpperCase() + words[0].slice(1);
  const end = r();
  return words.join(' ') + (end < 0.1 ? '?' : end < 0.13 ? '!' : '.');
}

/** Prose of sentences, at most `maxLen` characters (the last sentence cut on a word boundary). */
export function prose(r: () => number, maxLen: number): string {
  let out = '';
  while (out.length < maxLen) {
    const s = sentence(r);
    const next = out ? `${out} ${s}` : s;
    if (next.length <= maxLen) {
      out = next;
      continue;
    }
    const room = maxLen - (out ? out.length + 1 : 0);
    const cut = s.slice(0, Math.max(0, room - 1));
    const sp = cut.lastIndexOf(' ');
    if (sp > 0) out = (out ? `${out} ` : '') + cut.slice(0, sp).replace(/[,]$/, '') + '.';
    break;
  }
  return out || sentence(r).slice(0, maxLen);
}

const isProse = (v: string) => v.length >= 30 && (v.match(/ /g)?.length ?? 0) >= 4;
const ISO_DT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const HAS_OFFSET = /(?:[zZ]|[+-]\d{2}:?\d{2})$/;
const KEY_FIELDS = ['id', 'path', 'name', 'key'];
const TITLE_FIELDS = ['title', 'name', 'label', 'text', 'summary', 'value', 'belief', 'concept'];

function shiftDate(v: string, minutes: number): string {
  const dt = DateTime.fromISO(v, { zone: 'utc', setZone: true });
  if (!dt.isValid) return v;
  return dt.plus({ minutes }).toISO({ suppressMilliseconds: true, includeOffset: HAS_OFFSET.test(v) }) ?? v;
}

const mapKey = (v: string, c: number) => (v.includes('/') ? `c${c}/${v}` : `${v}-c${c}`);

/** Maps references to the example's keys (recursively) into cycle `c`. */
function mapRefs(v: unknown, keys: Set<string>, c: number): unknown {
  if (typeof v === 'string') return keys.has(v) ? mapKey(v, c) : v;
  if (Array.isArray(v)) return v.map((x) => mapRefs(x, keys, c));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapRefs(x, keys, c)]));
  return v;
}

interface GrowOptions {
  /** Prose fields of copies get this multiple of the original's length (default 1). */
  proseScale?: number;
  seed?: number;
}

/** The example's key values (ids, paths, names) of every list item: references to them are remapped in copies. */
function exampleKeys(example: Obj): Set<string> {
  const keys = new Set<string>();
  for (const { items } of objectLists(example))
    for (const it of items) for (const f of KEY_FIELDS) if (typeof it[f] === 'string') keys.add(it[f] as string);
  return keys;
}

/** Lists of objects at the top level and one level down, largest first. */
function objectLists(example: Obj): { path: string[]; items: Obj[] }[] {
  const out: { path: string[]; items: Obj[] }[] = [];
  const isList = (v: unknown): v is Obj[] =>
    Array.isArray(v) && v.length > 0 && typeof v[0] === 'object' && v[0] !== null;
  for (const [k, v] of Object.entries(example)) {
    if (isList(v)) out.push({ path: [k], items: v });
    else if (v && typeof v === 'object' && !Array.isArray(v))
      for (const [k2, v2] of Object.entries(v as Obj)) if (isList(v2)) out.push({ path: [k, k2], items: v2 });
  }
  return out.sort((a, b) => b.items.length - a.items.length);
}

/** Endpoints whose largest list is not the one that grows in real use. */
const MAIN_LIST: Record<string, string> = {
  // available_providers is capped at 1000; action hints are the uncapped input.
  '/actions/plan': 'action_hints',
};

function mainListPath(e: ReasoningEndpoint): string[] | undefined {
  const lists = objectLists(e.example as Obj);
  const forced = MAIN_LIST[e.path];
  return (forced ? lists.find((l) => l.path.join('.') === forced) : lists[0])?.path;
}

/** `items` grown to n realistic copies (see the module comment). */
function growList(items: Obj[], n: number, keys: Set<string>, opts: GrowOptions, listSeed: number): Obj[] {
  const out: Obj[] = [];
  const r = rng((opts.seed ?? 1) * 7919 + listSeed);
  const scale = opts.proseScale ?? 1;
  for (let i = 0; i < n; i++) {
    const src = items[i % items.length];
    if (i < items.length) {
      out.push(src);
      continue;
    }
    const c = Math.floor(i / items.length);
    const copy = mapRefs(src, keys, c) as Obj;
    const shift = (i * 37) % 2880;
    for (const [f, v] of Object.entries(copy)) {
      if (typeof v !== 'string') continue;
      const orig = src[f] as string;
      if (KEY_FIELDS.includes(f) && keys.has(orig)) continue; // already mapped
      if (ISO_DT.test(v)) copy[f] = shiftDate(v, shift);
      else if (isProse(v)) copy[f] = prose(r, Math.round(v.length * scale));
      else if (TITLE_FIELDS.includes(f)) copy[f] = `${v} ${contentWord(r)} ${contentWord(r)} ${i}`;
    }
    out.push(copy);
  }
  return out;
}

function setAt(body: Obj, path: string[], value: unknown): Obj {
  if (path.length === 1) return { ...body, [path[0]]: value };
  return { ...body, [path[0]]: { ...(body[path[0]] as Obj), [path[1]]: value } };
}

/**
 * The example with its main list grown to n items and every other list of objects grown with it
 * (each to the largest of n, 1000, 100, 10 its schema accepts). Undefined when the endpoint has
 * no list of objects or its schema caps the main list below n.
 */
export function grownBody(
  e: ReasoningEndpoint,
  n: number,
  opts: GrowOptions = {},
): { body: Obj; lists: string[] } | undefined {
  const example = e.example as Obj;
  const main = mainListPath(e);
  if (!main) return undefined;
  const keys = exampleKeys(example);
  const lists = objectLists(example);
  let body = example;
  const grown: string[] = [];
  const ordered = [
    lists.find((l) => l.path.join('.') === main.join('.'))!,
    ...lists.filter((l) => l.path.join('.') !== main.join('.')),
  ];
  for (const [k, l] of ordered.entries()) {
    const sizes = k === 0 ? [n] : [...new Set([n, 1000, 100, 10].filter((s) => s <= n && s > l.items.length))];
    let done = false;
    for (const s of sizes) {
      const candidate = setAt(body, l.path, growList(l.items, s, keys, opts, k));
      if (e.request.safeParse(candidate).success) {
        body = candidate;
        grown.push(`${l.path.join('.')}${s === n ? '' : `≤${s}`}`);
        done = true;
        break;
      }
    }
    if (k === 0 && !done) return undefined;
  }
  return { body, lists: grown };
}

/**
 * The request schema's `preferences` with every numeric `max*` cap at its maximum: the most work
 * a caller may ask for.
 */
export function maxedPreferences(e: ReasoningEndpoint, body: Obj): Obj {
  const shape = (e.request as unknown as { shape?: Record<string, z.ZodType> }).shape;
  const prefs = shape?.preferences;
  if (!prefs) return body;
  const inner = unwrap(prefs) as unknown as { shape?: Record<string, z.ZodType> };
  if (!inner.shape) return body;
  const out: Obj = { ...((body.preferences as Obj | undefined) ?? {}) };
  for (const [k, s] of Object.entries(inner.shape)) {
    const num = unwrap(s) as unknown as { maxValue?: number | null; def?: { type?: string } };
    if (/^max/i.test(k) && typeof num.maxValue === 'number' && Number.isFinite(num.maxValue)) out[k] = num.maxValue;
  }
  const candidate = { ...body, preferences: out };
  return e.request.safeParse(candidate).success ? candidate : body;
}

function unwrap(s: z.ZodType): z.ZodType {
  let cur = s as unknown as { unwrap?: () => z.ZodType; def?: { innerType?: z.ZodType } };
  for (let k = 0; k < 5; k++) {
    const inner = cur.def?.innerType ?? (typeof cur.unwrap === 'function' ? cur.unwrap() : undefined);
    if (!inner) break;
    cur = inner as never;
  }
  return cur as unknown as z.ZodType;
}

/**
 * The largest grown body (main list size, all lists growing together) whose JSON stays within
 * `limit` bytes and that the schema accepts; preferences caps maxed. Undefined without a list.
 */
export function largestBody(
  e: ReasoningEndpoint,
  limit: number,
  opts: GrowOptions = {},
): { body: Obj; n: number; bytes: number; lists: string[] } | undefined {
  const fits = (n: number) => {
    const g = grownBody(e, n, opts);
    if (!g) return undefined;
    const body = maxedPreferences(e, g.body);
    const bytes = Buffer.byteLength(JSON.stringify(body));
    return bytes <= limit ? { body, n, bytes, lists: g.lists } : undefined;
  };
  const main = mainListPath(e);
  const start = main ? objectLists(e.example as Obj).find((l) => l.path.join('.') === main.join('.'))!.items.length : 0;
  if (!start) return undefined;
  let lo = fits(start);
  if (!lo) return undefined;
  let hiN = start * 2;
  while (true) {
    const r = fits(hiN);
    if (!r) break;
    lo = r;
    if (hiN >= 1_000_000) return lo;
    hiN *= 2;
  }
  let a = lo.n;
  let b = hiN; // fits(a) holds, fits(b) fails
  while (b - a > Math.max(1, Math.floor(a / 50))) {
    const m = Math.floor((a + b) / 2);
    const r = fits(m);
    if (r) {
      lo = r;
      a = m;
    } else b = m;
  }
  return lo;
}
