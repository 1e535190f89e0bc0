import { reasoningEndpoints } from '../../reasoning/registry';
import type { AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

/** Mounts every structured-reasoning compiler at POST /v1<path>. Nothing is stored or sent. */
export function reasoningRoutes(): RouteSpec[] {
  return reasoningEndpoints().map((e) =>
    defineRoute({
      method: 'post',
      path: `/v1${e.path}`,
      access: 'key',
      summary: e.summary,
      tags: ['reasoning'],
      body: e.request,
      response: e.response,
      example: e.example,
      ...(e.path === '/learning/mastery/compile' ? { surfaces: ['learn'] as const } : {}),
      handler: (ctx: AppContext, { body }) => e.compile(body, { surface: ctx.state.surface }),
    }),
  );
}
