import { AppError, type ErrorCode } from '../../schema/errors';
import type { AppContext, AppMiddleware } from '../context';

/** Maps errors raised by body parsing and routing (http-errors with status/type) to our codes. */
function fromHttpError(err: { status?: number; type?: string; message?: string; expose?: boolean } | null): AppError | null {
  if (!err || typeof err !== 'object') return null;
  const status = err.status;
  if (!status || status < 400 || status >= 500) return null;
  if (err.type === 'entity.too.large' || status === 413)
    return new AppError('payload_too_large', 'Request body is larger than the limit for this endpoint.');
  if (err.type === 'entity.parse.failed' || err.type === 'entity.verify.failed' || (status === 400 && err instanceof SyntaxError))
    return new AppError('invalid_json', 'Request body is not valid JSON.');
  if (status === 415 || err.type === 'charset.unsupported' || err.type === 'encoding.unsupported')
    return new AppError('unsupported_media_type', err.message ?? 'Unsupported media type.');
  if (status === 405) return new AppError('method_not_allowed', err.message ?? 'Method not allowed.');
  if (status === 404) return new AppError('not_found', 'Not found.');
  const codes: Record<number, ErrorCode> = { 400: 'invalid_request', 401: 'unauthorized', 403: 'forbidden', 409: 'conflict', 429: 'rate_limited' };
  const code = codes[status];
  return code ? new AppError(code, err.expose && err.message ? err.message : 'Request refused.') : null;
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
      const err = raw instanceof AppError ? raw : fromHttpError(raw as object);
      if (err) {
        ctx.status = err.status;
        if (err.headers) for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
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
