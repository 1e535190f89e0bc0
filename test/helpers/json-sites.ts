/** JSON values as request examples hold them. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** Where a value sits in a JSON value: object keys and array indexes from the root. */
export type JsonPath = Array<string | number>;

/** The paths of every string value and of every object (the root included) in `v`. */
export function jsonSites(
  v: Json,
  path: JsonPath = [],
  out = { strings: [] as JsonPath[], objects: [] as JsonPath[] },
): { strings: JsonPath[]; objects: JsonPath[] } {
  if (typeof v === 'string') out.strings.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => jsonSites(x, [...path, i], out));
  else if (v && typeof v === 'object') {
    out.objects.push(path);
    for (const k of Object.keys(v)) jsonSites(v[k], [...path, k], out);
  }
  return out;
}

/** The value at `path` in `root`. */
export const jsonAt = (root: Json, path: JsonPath): Json =>
  path.reduce<Json>((c, k) => (c as Record<string | number, Json>)[k], root);

/** A copy of `root` with the value at each of `paths` replaced by `value`. */
export function withValueAt(root: Json, paths: JsonPath[], value: Json): Json {
  const copy = structuredClone(root);
  for (const p of paths) (jsonAt(copy, p.slice(0, -1)) as Record<string | number, Json>)[p[p.length - 1]] = value;
  return copy;
}
