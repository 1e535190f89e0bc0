import type { RouteSpec } from '../route';
import { documentsRoutes } from './documents';
import { enterpriseRoutes } from './enterprise';
import { memoryRoutes } from './memory';
import { shareRoutes } from './share';
import { spacesRoutes } from './spaces';

/** Routes of the knowledge area: documents, memory and ingestion, spaces, enterprise learning, shares. */
export function knowledgeRoutes(): RouteSpec[] {
  return [...documentsRoutes(), ...memoryRoutes(), ...spacesRoutes(), ...enterpriseRoutes(), ...shareRoutes()];
}
