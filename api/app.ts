import Koa from 'koa';
import { Router } from '@koa/router';
import { koaBody } from 'koa-body';
import type { z } from 'zod';
import { AppError, invalid, zodDetails } from '../schema/errors';
import type { AppContext, AppExtras, AppState } from './context';
import type { AppDeps } from './deps';
import { Metrics } from './metrics';
import { authorize } from './middleware/auth';
import { errorHandler } from './middleware/errors';
import { meter } from './middleware/meter';
import { requestContext } from './middleware/request-context';
import type { RouteSpec } from './route';
import { allRoutes } from './routes';

function parseInput<T extends z.ZodType | undefined>(schema: T, value: unknown, where: string) {
  if (!schema) return value;
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(zodDetails(r.error.issues, where), where === 'body' ? 'request body' : `${where} parameters`);
  return r.data;
}

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain NUL (\\u0000) characters';

/**
 * Paths of every string (value or object key) containing NUL: PostgreSQL cannot store it in text or
 * jsonb, so it is refused up front for every route. Walks plain objects and arrays only.
 */
function nulPaths(value: unknown, path: string, out: string[] = [], depth = 0): string[] {
  if (out.length >= 20 || depth > 100) return out;
  if (typeof value === 'string') {
    if (value.includes(NUL)) out.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulPaths(v, `${path}.${i}`, out, depth + 1));
  } else if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return out;
    for (const [k, v] of Object.entries(value)) {
      if (k.includes(NUL)) out.push(`${path}.${k.replaceAll(NUL, '\\u0000')}`);
      else nulPaths(v, `${path}.${k}`, out, depth + 1);
    }
  }
  return out;
}

/** @throws AppError invalid_request naming each field that contains NUL */
function rejectNul(inputs: Array<[unknown, string]>): void {
  const paths = inputs.flatMap(([value, where]) => nulPaths(value, where));
  if (paths.length) throw invalid(paths.map((path) => ({ path, message: NUL_MESSAGE })));
}

function hasBody(ctx: AppContext): boolean {
  const len = ctx.get('Content-Length');
  return (len !== '' && len !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/** Validates content type, parses JSON (with the configured limit), then validates everything with zod. */
function validate(route: RouteSpec, bodyLimit: number) {
  const json = koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonLimit: bodyLimit, jsonStrict: true });
  return async (ctx: AppContext, next: () => Promise<unknown>) => {
    if (route.body && !route.consumes) {
      if (hasBody(ctx)) {
        if (!ctx.is('application/json', '+json')) {
          throw new AppError('unsupported_media_type', 'Send the request body as application/json.');
        }
        await json(ctx as never, async () => {});
      }
    }
    ctx.state.routeName = route.path;
    const body = route.body && !route.consumes ? parseInput(route.body, ctx.request.body ?? {}, 'body') : undefined;
    const query = parseInput(route.query, { ...ctx.query }, 'query');
    const params = parseInput(route.params, (ctx as unknown as { params: unknown }).params, 'path');
    rejectNul([[body, 'body'], [query, 'query'], [params, 'path']]);
    const result = await route.handler(ctx, { body, query, params } as never);
    if (result !== undefined) {
      ctx.status = route.status ?? 200;
      ctx.body = result;
    }
    return next();
  };
}

/** Builds the Koa app (no listen). `routes` defaults to every route of the service. */
export function createApp(deps: AppDeps, routes: RouteSpec[] = allRoutes()): Koa<AppState, AppExtras> {
  const app = new Koa<AppState, AppExtras>({ proxy: false });
  app.context.deps = deps;
  app.context.metrics = new Metrics();
  app.silent = true;
  app.on('error', (err: NodeJS.ErrnoException) => {
    // A client that hangs up on a stream is not a server fault.
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    deps.log.error({ err }, 'koa error');
  });

  const router = new Router<AppState, AppExtras>();
  for (const route of routes) {
    router[route.method](route.path, (ctx, next) => {
      ctx.state.routeName = route.path;
      return next();
    }, authorize(route.access) as never, ...(route.metered ? [meter() as never] : []), validate(route, deps.config.bodyLimit) as never);
  }

  app.use(requestContext() as never);
  app.use(errorHandler() as never);
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new AppError('method_not_allowed', 'This method is not allowed on this path.'),
      notImplemented: () => new AppError('method_not_allowed', 'This method is not supported.'),
    }),
  );
  return app;
}
