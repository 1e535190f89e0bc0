import type { AppContext, AppMiddleware } from '../context';
import { randomToken } from '../../activities/store/ids';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/**
 * First in the chain: assigns the request id, and on the way out records metrics and one
 * structured log line (never headers, bodies or keys).
 */
export function requestContext(): AppMiddleware {
  return async (ctx: AppContext, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    ctx.state.requestId = INCOMING_ID.test(incoming) ? incoming : `req_${randomToken(16)}`;
    ctx.set('X-Request-Id', ctx.state.requestId);
    const finish = () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = ctx.state.routeName ?? 'unmatched';
      ctx.metrics.observeHttp(ctx.method, route, ctx.status, seconds);
      const log = ctx.deps.log;
      // The line is built only when its level is on (benchmarks and quiet deployments pay nothing).
      if (!log.isLevelEnabled(ctx.status >= 500 ? 'error' : 'info')) return;
      const line = {
        request_id: ctx.state.requestId,
        tenant: ctx.state.principal?.tenantId,
        method: ctx.method,
        route,
        path: ctx.path,
        status: ctx.status,
        duration_ms: Math.round(seconds * 1000 * 10) / 10,
      };
      if (ctx.status >= 500) log.error(line, 'request failed');
      else log.info(line, 'request');
    };
    try {
      await next();
    } finally {
      // Streaming bodies (SSE) finish later: log when the response really ends.
      if (ctx.res.writableEnded || !ctx.body || typeof (ctx.body as { pipe?: unknown }).pipe !== 'function') finish();
      else ctx.res.once('close', finish);
    }
  };
}
