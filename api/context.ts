import type { Decision } from './gateway/limiter';
import type { Context, Next, ParameterizedContext } from 'koa';
import type { KeyPrincipal } from '../activities/store/keys';
import type { AppDeps } from './deps';
import type { Metrics } from './metrics';

export interface AppState {
  requestId: string;
  principal?: KeyPrincipal;
  /** Surface picked by X-Svc-Context, when valid. */
  surface?: string;
  routeName?: string;
  /** Model usage of this request (summed over its upstream calls), for limits and the usage report. */
  usage?: { lane: string; promptTokens: number; completionTokens: number; estimated: boolean };
  /** The rate-limit admission of a metered request (its windows: work that ends later charges its tokens to them). */
  admission?: Decision;
}

export interface AppExtras {
  deps: AppDeps;
  metrics: Metrics;
}

export type AppContext = ParameterizedContext<AppState, Context & AppExtras>;
export type AppMiddleware = (ctx: AppContext, next: Next) => Promise<unknown>;

/** The authenticated principal; routes behind a scope always have one. */
export function principalOf(ctx: AppContext): KeyPrincipal {
  const p = ctx.state.principal;
  if (!p) throw new Error('route reached without a principal: auth middleware missing');
  return p;
}
