import { z } from 'zod';

/** Every error the API can answer with, and its HTTP status. One table, used everywhere. */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  model_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  idempotency_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  header_too_large: 431,
  internal: 500,
  upstream_error: 502,
  service_unavailable: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one application error. `error` is a sentence a person can act on. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly scope?: string;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { scope?: string; details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.scope = opts.scope;
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const ErrorResponse = z
  .object({
    error: z.string().describe('What went wrong, as a sentence.'),
    code: z.string().optional().describe('Machine-readable error code.'),
    scope: z.string().optional().describe('The scope involved, when relevant.'),
    details: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Each invalid field path with its problem.'),
    request_id: z.string().optional(),
  })
  .meta({ id: 'ErrorResponse' });

/** Turns zod issues into `details` entries (`body.messages.0.role`). */
export function zodDetails(issues: readonly z.core.$ZodIssue[], prefix: string): ErrorDetail[] {
  return issues.flatMap((i) => {
    const path = [prefix, ...i.path.map(String)].filter((p) => p !== '').join('.');
    return i.code === 'invalid_union' ? unionDetails(i, path) : [{ path, message: i.message }];
  });
}

/**
 * A value no alternative of a union took: zod says only "Invalid input". Said instead: the issues of the one
 * alternative whose type the value has (an array of parts with a bad part names that part), else the types the
 * alternatives expect.
 */
function unionDetails(issue: z.core.$ZodIssueInvalidUnion, path: string): ErrorDetail[] {
  const wrongType = (branch: readonly z.core.$ZodIssue[]) =>
    branch.length === 1 && branch[0].code === 'invalid_type' && branch[0].path.length === 0;
  const branches = issue.errors ?? [];
  const fitting = branches.filter((b) => !wrongType(b));
  if (fitting.length === 1) return zodDetails(fitting[0], path);
  if (fitting.length === 0 && branches.length > 1) {
    const expected = [...new Set(branches.map((b) => String((b[0] as z.core.$ZodIssueInvalidType).expected)))];
    return [{ path, message: `Invalid input: expected ${expected.join(' or ')}` }];
  }
  return [{ path, message: issue.message }];
}

export function invalid(details: ErrorDetail[], what = 'request'): AppError {
  const list = details
    .slice(0, 5)
    .map((d) => `${d.path}: ${d.message}`)
    .join('; ');
  return new AppError('invalid_request', `Invalid ${what}: ${list}${details.length > 5 ? '; ...' : ''}`, {
    details,
  });
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found.`);
}
