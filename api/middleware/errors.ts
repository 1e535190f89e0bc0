import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError, InvalidInputError } from 'slonik';
import { AppError, type ErrorCode } from '../../schema/errors';
import type { AppContext, AppMiddleware } from '../context';
import { isTemporalUnavailable } from '../start-workflow';

/**
 * PostgreSQL class 22 "data exception" is the database refusing a value: 22021 (NUL in text), 22P05
 * (\u0000 in jsonb), 22P02 (e.g. a lone surrogate in jsonb), 22001 (too long), 22003, 22007, 22008...
 * As a safety net behind request validation they all answer 400. Not 22012 (division by zero): a bug.
 */
function isPgDataException(e: Record<string, unknown>): boolean {
  const code = e.code;
  // slonik reports 22P02 (and NUL or lone surrogates in a sql.jsonb payload) as InvalidInputError, without the code.
  if (e instanceof InvalidInputError) return true;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && code !== '22012';
}

/**
 * PostgreSQL unreachable or going away (restart, failover): slonik's connection errors, SQLSTATE class 08
 * (connection exception) and 57P01-57P03 (shutting down, cannot connect now), or the socket refused/reset.
 */
function isDatabaseUnavailable(e: Record<string, unknown>): boolean {
  if (
    e instanceof ConnectionError ||
    e instanceof BackendTerminatedError ||
    e instanceof BackendTerminatedUnexpectedlyError
  )
    return true;
  const code = e.code;
  if (typeof code !== 'string') return /^Connection terminated/.test(String(e.message ?? ''));
  return /^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET'].includes(code);
}

/** `err` and its causes (slonik and the Temporal client wrap the original error), at most 8 deep. */
function* causes(err: unknown): Generator<Record<string, unknown>> {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    yield e as Record<string, unknown>;
    e = (e as { cause?: unknown }).cause;
  }
}

/**
 * Maps failures of our dependencies that are not server bugs to a client answer:
 * - PostgreSQL refusing a value (class 22: NUL, bad surrogate, too long...) that slipped past validation → 400;
 * - PostgreSQL or the Temporal service unreachable or not answering in time → 503 service_unavailable.
 * Other errors (including foreign-key violations, which can mean many things) stay 500.
 * `onBadInput` runs when the database refused the input (to log it).
 */
export function fromDependencyError(err: unknown, onBadInput?: () => void): AppError | null {
  for (const e of causes(err)) {
    if (isPgDataException(e)) {
      onBadInput?.();
      const what =
        e.code === '22021' || e.code === '22P05'
          ? 'a character that cannot be stored (NUL, \\u0000)'
          : 'a value the database cannot store';
      return new AppError('invalid_request', `The request contains ${what}. Correct it and retry.`, { cause: err });
    }
  }
  for (const e of causes(err)) {
    if (isDatabaseUnavailable(e)) {
      return new AppError(
        'service_unavailable',
        'The database is unavailable (restarting or unreachable). Try again shortly.',
        {
          cause: err,
          headers: { 'Retry-After': '2' },
        },
      );
    }
  }
  if (isTemporalUnavailable(err)) {
    return new AppError(
      'service_unavailable',
      'The workflow service (Temporal) is unavailable or did not answer in time. Try again shortly.',
      {
        cause: err,
        headers: { 'Retry-After': '5' },
      },
    );
  }
  return null;
}

/** Maps errors raised by body parsing and routing (http-errors with status/type) to our codes. */
function fromHttpError(
  err: { status?: number; type?: string; message?: string; expose?: boolean } | null,
): AppError | null {
  if (!err || typeof err !== 'object') return null;
  const status = err.status;
  if (!status || status < 400 || status >= 500) return null;
  if (err.type === 'entity.too.large' || status === 413)
    return new AppError('payload_too_large', 'Request body is larger than the limit for this endpoint.');
  if (
    err.type === 'entity.parse.failed' ||
    err.type === 'entity.verify.failed' ||
    (status === 400 && err instanceof SyntaxError)
  )
    return new AppError('invalid_json', 'Request body is not valid JSON.');
  if (status === 415 || err.type === 'charset.unsupported' || err.type === 'encoding.unsupported')
    return new AppError('unsupported_media_type', err.message ?? 'Unsupported media type.');
  if (status === 405) return new AppError('method_not_allowed', err.message ?? 'Method not allowed.');
  if (status === 404) return new AppError('not_found', 'Not found.');
  const codes: Record<number, ErrorCode> = {
    400: 'invalid_request',
    401: 'unauthorized',
    403: 'forbidden',
    409: 'conflict',
    429: 'rate_limited',
  };
  const code = codes[status];
  return code ? new AppError(code, err.expose && err.message ? err.message : 'Request refused.') : null;
}

/** Retry-After of a 503 whose error named none (seconds). */
const UNAVAILABLE_RETRY_AFTER_S = '2';

/**
 * A request answered with an error before its body was read to the end (a compressed body past the limit once
 * inflated, a multipart upload past its limit): the rest is read and dropped. Node drains a body nobody started to
 * read, but not one a parser stopped reading; left paused, it held the connection, and the client's next request on
 * that kept-alive connection waited until the server closed it (ECONNRESET). The body timeout bounds the drain.
 */
function discardRestOfBody(ctx: AppContext): void {
  const req = ctx.req;
  if (req.complete || req.destroyed) return;
  req.unpipe();
  req.resume();
}

/** The one error middleware: every failure becomes an ErrorResponse body; 5xx never leak internals. */
export function errorHandler(): AppMiddleware {
  return async (ctx: AppContext, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined && !ctx.state.routeName) {
        throw new AppError('not_found', `No route for ${ctx.method} ${ctx.path}.`);
      }
    } catch (raw) {
      discardRestOfBody(ctx);
      // Input that reached the database although validation should have refused it: worth a look.
      const badInput = () =>
        ctx.deps.log.warn({ request_id: ctx.state.requestId, err: raw }, 'database refused the input');
      const err = raw instanceof AppError ? raw : (fromHttpError(raw as object) ?? fromDependencyError(raw, badInput));
      if (err) {
        ctx.status = err.status;
        if (err.headers) for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
        // Every 503 says when to come back; a site that knows better (database 2 s, Temporal 5 s) sets its own.
        if (err.status === 503 && !Object.keys(err.headers ?? {}).some((k) => k.toLowerCase() === 'retry-after'))
          ctx.set('Retry-After', UNAVAILABLE_RETRY_AFTER_S);
        ctx.body = {
          error: err.message,
          code: err.code,
          ...(err.scope ? { scope: err.scope } : {}),
          ...(err.details ? { details: err.details } : {}),
          request_id: ctx.state.requestId,
        };
        if (err.status >= 500) ctx.deps.log.error({ request_id: ctx.state.requestId, err: raw }, err.message);
        return;
      }
      ctx.deps.log.error({ request_id: ctx.state.requestId, err: raw }, 'unhandled error');
      ctx.status = 500;
      ctx.body = {
        error: `Internal error. Quote request id ${ctx.state.requestId} when reporting it.`,
        code: 'internal',
        request_id: ctx.state.requestId,
      };
    }
  };
}
