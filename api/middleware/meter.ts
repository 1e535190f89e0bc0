import type { CounterDelta } from '../../activities/store/rate-limits';
import { AppError } from '../../schema/errors';
import { principalOf, type AppContext, type AppMiddleware } from '../context';
import { gatewayOf } from '../gateway';

const LIMIT_NAMES: Record<string, string> = {
  requests_per_minute: 'requests per minute',
  tokens_per_minute: 'tokens per minute',
  tokens_per_day: 'tokens per day',
  tokens_per_month: 'tokens per month',
};

/**
 * Rate limits, budgets and usage of a model route (`metered` in the route table): admits the
 * request against the key's and the tenant's limits (429 + Retry-After when one is spent), puts
 * the x-ratelimit-* headers on every answer, and when the answer is complete (streams: when the
 * response closes) adds its tokens to the counters, the usage report and the Prometheus counters.
 */
export function meter(o: { usage: boolean } = { usage: true }): AppMiddleware {
  return async (ctx: AppContext, next) => {
    const p = principalOf(ctx);
    const g = gatewayOf(ctx.deps);
    const decision = await g.limiter.admit(p);
    ctx.state.admission = decision;
    for (const name in decision.headers) ctx.set(name, decision.headers[name]);
    if (!decision.ok) {
      ctx.metrics.countChat('none', 429);
      throw new AppError(
        'rate_limited',
        `Rate limit reached for this key or tenant: ${LIMIT_NAMES[decision.reason ?? ''] ?? decision.reason}. Retry after ${decision.retryAfterS} s.`,
        {
          headers: { 'Retry-After': String(decision.retryAfterS) },
        },
      );
    }
    // Admission only: the work's own usage is recorded where it runs.
    if (!o.usage) return next();
    const done = () => {
      const u = ctx.state.usage;
      const lane = u?.lane ?? 'none';
      const tokensIn = u?.promptTokens ?? 0;
      const tokensOut = u?.completionTokens ?? 0;
      if (tokensIn + tokensOut > 0) g.limiter.addTokens(decision, tokensIn + tokensOut);
      g.usage.record({
        tenantId: p.tenantId,
        keyId: p.keyId,
        lane,
        error: ctx.status >= 400,
        tokensIn,
        tokensOut,
        estimated: u?.estimated ?? false,
      });
      ctx.metrics.countChat(lane, ctx.status);
      if (tokensIn) ctx.metrics.countTokens(lane, 'in', tokensIn);
      if (tokensOut) ctx.metrics.countTokens(lane, 'out', tokensOut);
    };
    try {
      await next();
    } catch (err) {
      // The error middleware further out sets the status: count the failure with the status it will get.
      const lane = ctx.state.usage?.lane ?? 'none';
      g.usage.record({
        tenantId: p.tenantId,
        keyId: p.keyId,
        lane,
        error: true,
        tokensIn: 0,
        tokensOut: 0,
        estimated: false,
      });
      ctx.metrics.countChat(lane, err instanceof AppError ? err.status : 500);
      throw err;
    }
    // Streams end later: count them when the response is complete.
    // (On the body stream, not the response: Koa and pipeline already hang ten listeners on the response.)
    const body = ctx.body as { pipe?: unknown; once?: (ev: string, fn: () => void) => void } | undefined;
    if (body && typeof body.pipe === 'function' && body.once && !ctx.res.writableEnded) body.once('close', done);
    else done();
  };
}

/**
 * The rate-limit windows a metered request was admitted in, as rows of `rate_counters` to charge: work that ends
 * later (a background response, a batch's requests) adds its tokens to them.
 */
export function admittedWindows(ctx: AppContext): Array<Omit<CounterDelta, 'requests' | 'tokens'>> {
  return (ctx.state.admission?.counters ?? []).map((c) => ({
    tenantId: c.tenantId,
    scope: c.scope,
    win: c.win,
    windowStart: c.start,
  }));
}
