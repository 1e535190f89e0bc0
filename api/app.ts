import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import { Router } from '@koa/router';
import { koaBody } from 'koa-body';
import type { z } from 'zod';
import { AppError, invalid, zodDetails } from '../schema/errors';
import { tooDeep, unstorablePaths } from '../schema/storable';
import { IdempotencyHeaders } from '../schema/headers';
import { GENERAL_SURFACES, parseSurface } from '../schema/surfaces';
import type { AppContext, AppExtras, AppState } from './context';
import { corsHandler } from './cors';
import type { AppDeps } from './deps';
import { createFastPath, type FastHandler } from './fast-path';
import { withIdempotency } from './idempotency';
import { plainJsonBody, readJsonBody } from './json-body';
import { Metrics } from './metrics';
import { authorize } from './middleware/auth';
import { bodyTimeout } from './middleware/body-timeout';
import { configureFileReading } from '../activities/web/extract-pool';
import { errorHandler } from './middleware/errors';
import { meter } from './middleware/meter';
import { requestContext } from './middleware/request-context';
import type { RouteSpec } from './route';
import { allRoutes } from './routes';

function parseInput<T extends z.ZodType | undefined>(schema: T, value: unknown, where: string) {
  if (!schema) return value;
  const r = schema.safeParse(value);
  if (!r.success) {
    const details = zodDetails(r.error.issues, where);
    // A query field given twice arrives as a list: say so rather than "expected number, received NaN".
    if (where === 'query')
      for (const d of details) {
        const field = d.path.split('.')[1];
        if (field !== undefined && Array.isArray((value as Record<string, unknown>)[field]))
          d.message = 'given more than once: give it once';
      }
    throw invalid(details, where === 'body' ? 'request body' : `${where} parameters`);
  }
  return r.data;
}

/** @throws AppError invalid_request naming each field that cannot be stored */
function rejectUnstorable(inputs: Array<[unknown, string]>): void {
  const details = inputs.flatMap(([value, where]) => unstorablePaths(value, where));
  if (details.length) throw invalid(details);
}

function hasBody(ctx: AppContext): boolean {
  const len = ctx.get('Content-Length');
  return (len !== '' && len !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/** Validates content type, parses JSON (with the configured limit), then validates everything with zod. */
function validate(route: RouteSpec, bodyLimit: number) {
  const json = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: bodyLimit,
    jsonStrict: true,
  });
  return async (ctx: AppContext, next: () => Promise<unknown>) => {
    if (route.body && !route.consumes) {
      // The common case (plain application/json with a Content-Length) is read directly: koa-body's
      // type checks, inflation stream and generic reader showed in every chat's profile.
      if (plainJsonBody(ctx.req, bodyLimit)) ctx.request.body = (await readJsonBody(ctx.req)) as never;
      else if (hasBody(ctx)) {
        if (!ctx.is('application/json', '+json')) {
          throw new AppError('unsupported_media_type', 'Send the request body as application/json.');
        }
        await json(ctx as never, async () => {}).catch((err: { status?: number }) => {
          // A body that does not decode with its Content-Encoding (gzip, deflate, br) is the client's fault.
          if (err.status === undefined && ctx.get('Content-Encoding')) {
            throw new AppError(
              'invalid_request',
              `The request body could not be decoded as Content-Encoding: ${ctx.get('Content-Encoding').slice(0, 40)}.`,
            );
          }
          throw err;
        });
      }
    }
    ctx.state.routeName = route.path;
    if (route.surfaces)
      ctx.state.surface = parseSurface(ctx.get('X-Svc-Context') || undefined, [...GENERAL_SURFACES, ...route.surfaces]);
    const raw = route.body && !route.consumes ? (ctx.request.body ?? {}) : undefined;
    const deep = raw === undefined ? undefined : tooDeep(raw, 'body');
    if (deep) throw invalid([deep], 'request body');
    const body = raw === undefined ? undefined : (route.readBody?.(raw) ?? parseInput(route.body, raw, 'body'));
    const query = parseInput(route.query, { ...ctx.query }, 'query');
    const params = parseInput(route.params, (ctx as unknown as { params: unknown }).params, 'path');
    const headers = {
      ...((route.readHeaders?.(ctx.headers) ?? parseInput(route.headers, ctx.headers, 'headers')) as
        object | undefined),
      ...(route.idempotent ? (parseInput(IdempotencyHeaders, ctx.headers, 'headers') as object) : {}),
    } as Record<string, unknown>;
    rejectUnstorable([
      [body, 'body'],
      [query, 'query'],
      [params, 'path'],
      [headers, 'headers'],
    ]);
    const run = () => route.handler(ctx, { body, query, params, headers } as never);
    const key = headers['idempotency-key'] as string | undefined;
    const result = await (route.idempotent
      ? withIdempotency(ctx, `${route.method.toUpperCase()} ${ctx.path}`, body ?? {}, run, key)
      : run());
    if (result !== undefined) {
      ctx.status = route.status ?? 200;
      ctx.body = result;
    }
    return next();
  };
}

type Dispatch = (ctx: AppContext, next: () => Promise<unknown>) => Promise<unknown>;

/** Runs `stack` in order, like koa-compose for a fixed chain (each `next` runs the following one). */
function chain(stack: Dispatch[]): Dispatch {
  return (ctx, next) => {
    const run = (i: number): Promise<unknown> => {
      if (i === stack.length) return next();
      try {
        return Promise.resolve(stack[i](ctx, () => run(i + 1)));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    };
    return run(0);
  };
}

/** While draining, answers still come but keep-alive connections are closed after them. */
function closeWhenDraining(deps: AppDeps): Dispatch {
  return (ctx, next) => {
    if (deps.lifecycle?.draining) ctx.set('Connection', 'close');
    return next();
  };
}

/** The Koa app whose request handler first offers each request to the fast path (api/fast-path.ts). */
class ServiceApp extends Koa<AppState, AppExtras> {
  fast?: FastHandler;
  cors?: (req: IncomingMessage, res: ServerResponse) => boolean;

  override callback(): ReturnType<Koa['callback']> {
    const koa = super.callback();
    const { fast, cors } = this;
    if (!fast && !cors) return koa;
    return (req, res) =>
      cors?.(req as IncomingMessage, res as ServerResponse) || fast?.(req as IncomingMessage, res as ServerResponse)
        ? Promise.resolve()
        : koa(req, res);
  }
}

/** Builds the Koa app (no listen). `routes` defaults to every route of the service. */
export function createApp(deps: AppDeps, routes: RouteSpec[] = allRoutes()): Koa<AppState, AppExtras> {
  const app = new ServiceApp({ proxy: false });
  app.context.deps = deps;
  configureFileReading({ memoryMb: deps.config.extractMemoryMb });
  app.context.metrics = new Metrics();
  app.cors = corsHandler(deps.config.http.corsOrigins);
  app.silent = true;
  app.on('error', (err: NodeJS.ErrnoException) => {
    // A client that hangs up on a stream is not a server fault.
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    deps.log.error({ err }, 'koa error');
  });

  const limitOf = (route: RouteSpec) => (route.conversation ? deps.config.chatBodyLimit : deps.config.bodyLimit);
  const router = new Router<AppState, AppExtras>();
  const stacks: Array<{ route: RouteSpec; stack: Dispatch[] }> = [];
  for (const route of routes) {
    const stack: Dispatch[] = [
      (ctx, next) => {
        ctx.state.routeName = route.path;
        return next();
      },
      authorize(route.access),
      ...(route.metered ? [meter({ usage: route.metered === true })] : []),
      validate(route, limitOf(route)),
    ];
    stacks.push({ route, stack });
    router[route.method](route.path, ...(stack as never[]));
  }
  // Paths without parameters are found by one Map lookup instead of the router's regular expressions
  // (its matching was the largest router cost per chat request). Only where the router would run
  // exactly this one route for that method and exact path; anything else (HEAD, OPTIONS, other
  // spellings of the path, parameter routes) goes through the router as before.
  const exact = new Map<string, Dispatch>();
  for (const { route, stack } of stacks) {
    const method = route.method.toUpperCase();
    if (route.path.includes(':') || router.match(route.path, method).pathAndMethod.length !== 1) continue;
    exact.set(`${method} ${route.path}`, chain(stack));
  }
  const routed = router.routes();

  // Outside the routes, in this order, for Koa and for the fast path alike.
  const outer: Dispatch[] = [
    requestContext() as Dispatch,
    closeWhenDraining(deps),
    errorHandler() as Dispatch,
    bodyTimeout(deps.config.http.bodyTimeoutMs) as Dispatch,
  ];
  for (const m of outer) app.use(m as never);
  app.use((ctx, next) => {
    const hit = exact.get(`${ctx.method} ${ctx.path}`);
    if (!hit) return routed(ctx as never, next);
    (ctx as unknown as { params: object }).params = {};
    return hit(ctx, next);
  });
  // The router answers a known path with another method 405 (501 for a method it does not know) and the Allow
  // header RFC 9110 requires; that answer becomes our JSON error, Allow kept.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body !== undefined || (ctx.status !== 405 && ctx.status !== 501)) return;
    const allow = ctx.response.get('Allow');
    throw new AppError(
      'method_not_allowed',
      ctx.status === 405 ? 'This method is not allowed on this path.' : 'This method is not supported.',
      allow ? { headers: { Allow: allow } } : {},
    );
  });
  app.use(router.allowedMethods());
  if (deps.config.http.fastPath !== false) {
    // The model routes (metered) by their exact path; idempotent and non-JSON routes never qualify.
    const hot = new Map<string, { stack: Dispatch[]; bodyLimit: number }>();
    for (const { route, stack } of stacks)
      if (
        route.metered &&
        route.method === 'post' &&
        exact.has(`POST ${route.path}`) &&
        !route.idempotent &&
        !route.consumes
      )
        hot.set(route.path, { stack, bodyLimit: limitOf(route) });
    app.fast = createFastPath({ app, outer, routes: hot, chain });
  }
  return app;
}
