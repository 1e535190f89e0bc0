import type { ErrorDetail } from './errors';

// What PostgreSQL refuses to store, checked at the edge for every route (issue 10, item 6).

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain NUL (\\u0000) characters';
const SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate (e.g. \\ud800): send well-formed Unicode';

/** Why PostgreSQL cannot store `s` (NUL in text/jsonb, a lone surrogate in jsonb), or undefined. */
export function unstorable(s: string): string | undefined {
  if (s.includes(NUL)) return NUL_MESSAGE;
  if (!s.isWellFormed()) return SURROGATE_MESSAGE;
  return undefined;
}

/**
 * Text from outside the request (a model's answer) made storable: NUL and lone surrogates become
 * U+FFFD, the replacement character, as a UTF-8 decoder shows bytes it cannot read. Unchanged (the
 * same string) when already storable, which is the common case and costs two scans.
 */
export function storableText(s: string): string {
  return s.includes(NUL) || !s.isWellFormed() ? s.replaceAll(NUL, '\uFFFD').toWellFormed() : s;
}

/**
 * Text read out of a file or page, as a reader shows it: NULs dropped and unpaired surrogates as U+FFFD, so PostgreSQL
 * can store it. Unchanged (the same string) when already clean.
 */
export function readableText(s: string): string {
  const t = s.includes(NUL) ? s.replaceAll(NUL, '') : s;
  return t.isWellFormed() ? t : t.toWellFormed();
}

/**
 * JSON.parse for JSON another system wrote (a model's answer): a `\u0000` or lone-surrogate escape decodes to what
 * PostgreSQL cannot store, so every string and key is made storable as it is read. @throws SyntaxError as JSON.parse
 */
export function parseStorableJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (typeof value === 'string') return storableText(value);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const keys = Object.keys(value);
    if (keys.every((k) => storableText(k) === k)) return value;
    return Object.fromEntries(keys.map((k) => [storableText(k), (value as Record<string, unknown>)[k]]));
  });
}

/**
 * Every string (value or object key) PostgreSQL cannot store: refused up front for every route with
 * the field's path, so nothing is half-stored. Walks plain objects and arrays only. A path is
 * joined only for a field that is refused (the walk itself allocates no strings).
 */
export function unstorablePaths(value: unknown, path: string, out: ErrorDetail[] = [], depth = 0): ErrorDetail[] {
  walk(value, [path], out, depth);
  return out;
}

function walk(value: unknown, parts: Array<string | number>, out: ErrorDetail[], depth: number): void {
  if (out.length >= 20 || depth > 100) return;
  if (typeof value === 'string') {
    const message = unstorable(value);
    if (message) out.push({ path: parts.join('.'), message });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      parts.push(i);
      walk(value[i], parts, out, depth + 1);
      parts.pop();
    }
  } else if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const message = unstorable(k);
      if (message) out.push({ path: `${parts.join('.')}.${k.replaceAll(NUL, '\\u0000').toWellFormed()}`, message });
      else {
        parts.push(k);
        walk((value as Record<string, unknown>)[k], parts, out, depth + 1);
        parts.pop();
      }
    }
  }
}

/** How deep a request's JSON may nest (OpenAI's Structured Outputs schemas stay well within it). */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` holds objects and arrays nested `levels` deep or more (explicit stacks, no strings built). */
function nestsAtLeast(value: unknown, levels: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 >= levels) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      values.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/**
 * Where `value` nests more than MAX_JSON_DEPTH objects and arrays deep, or undefined. A value nested thousands deep
 * (JSON.parse takes it) overflows every recursive walk after it (JSON.stringify, validation, PostgreSQL's jsonb)
 * with an error that is not the client's answer; it is refused first.
 */
export function tooDeep(value: unknown, path: string): ErrorDetail | undefined {
  if (!nestsAtLeast(value, MAX_JSON_DEPTH + 1)) return undefined;
  // Rare: follow a branch that is too deep, to name the place.
  let v = value as object;
  let at = path;
  for (let left = MAX_JSON_DEPTH; left > 0; left--) {
    const entries = Object.entries(v) as Array<[string, unknown]>;
    const [k, child] = entries.find(([, x]) => nestsAtLeast(x, left))!;
    v = child as object;
    at = `${at}.${k}`;
  }
  return { path: at, message: `must not nest more than ${MAX_JSON_DEPTH} levels deep` };
}
