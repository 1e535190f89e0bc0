import type { RouteSpec } from '../route';
import { goalRoutes } from './goals';
import { padRoutes } from './pad';
import { sovereignRoutes } from './sovereign';
import { swarmRoutes } from './swarm';

/** Durable agent jobs: goals, sovereign goals, parallel agent dispatch, swarm runs. */
export function jobsRoutes(): RouteSpec[] {
  return [...goalRoutes(), ...sovereignRoutes(), ...padRoutes(), ...swarmRoutes()];
}
