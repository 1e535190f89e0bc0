import type { RouteSpec } from '../route';
import { chatRoutes } from './chat';
import { entitiesRoutes } from './entities';
import { jobsRoutes } from './jobs';
import { knowledgeRoutes } from './knowledge';
import { reasoningRoutes } from './reasoning';
import { keyInfoRoute, registerRoutes } from './register';
import { systemRoutes } from './system';
import { tasksRoutes } from './tasks';
import { usageRoutes } from './usage';

let cached: RouteSpec[] | undefined;

/**
 * Every route of the service. This list is also the route→scope table: each entry's
 * `access` is enforced by the one auth middleware and published in the OpenAPI document.
 */
export function allRoutes(): RouteSpec[] {
  cached ??= [
    ...systemRoutes(allRoutes),
    ...registerRoutes(),
    keyInfoRoute(),
    ...usageRoutes(),
    ...chatRoutes(),
    ...tasksRoutes(),
    ...entitiesRoutes(),
    ...knowledgeRoutes(),
    ...jobsRoutes(),
    ...reasoningRoutes(),
  ];
  return cached;
}
