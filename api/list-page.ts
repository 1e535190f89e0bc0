import { AppError } from '../schema/errors';

/**
 * OpenAI's cursor list of a page read with one row more than `limit` (that row only says more follow): `data`,
 * `first_id`, `last_id`, `has_more`.
 */
export function cursorPage<R, T extends { id?: string | null }>(rows: readonly R[], limit: number, map: (r: R) => T) {
  const data = rows.slice(0, limit).map(map);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: rows.length > limit,
  };
}

/** The 400 of an `after` cursor that names nothing of the list's (`what`: "file", "batch", "item"). */
export function unknownCursor(after: string, what: string, among: string): AppError {
  return new AppError('invalid_request', `after: no ${what} '${after}' ${among}.`, {
    details: [{ path: 'query.after', message: `unknown ${what} id` }],
  });
}
