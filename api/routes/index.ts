import type { RouteSpec } from '../route';
import { agentsRoutes } from './agents';
import { capabilitiesRoutes } from './capabilities';
import { browserRoutes } from './browser';
import { chatRoutes } from './chat';
import { responseRoutes } from './responses';
import { embeddingRoutes } from './embeddings';
import { completionRoutes } from './completions';
import { moderationRoutes } from './moderations';
import { audioRoutes } from './audio';
import { webhookRoutes } from './webhooks';
import { fileRoutes } from './files';
import { uploadRoutes } from './uploads';
import { vectorStoreRoutes } from './vector-stores';
import { batchRoutes } from './batches';
import { conversationRoutes } from './conversations';
import { daemonsRoutes } from './daemons';
import { entitiesRoutes } from './entities';
import { identityRoutes } from './identity';
import { jobEventRoutes } from './job-events';
import { emailRoutes } from './email';
import { imagesRoutes } from './images';
import { jobsRoutes } from './jobs';
import { knowledgeRoutes } from './knowledge';
import { liveRoutes } from './live';
import { mcpRoutes } from './mcp';
import { reasoningRoutes } from './reasoning';
import { keyInfoRoute, registerRoutes } from './register';
import { systemRoutes } from './system';
import { tasksRoutes } from './tasks';
import { toolsPlanRoutes } from './tools-plans';
import { visionRoutes } from './vision';
import { workspacesRoutes } from './workspaces';
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
    ...responseRoutes(),
    ...embeddingRoutes(),
    ...completionRoutes(),
    ...moderationRoutes(),
    ...audioRoutes(),
    ...webhookRoutes(),
    ...fileRoutes(),
    ...uploadRoutes(),
    ...batchRoutes(),
    ...conversationRoutes(),
    ...tasksRoutes(),
    ...entitiesRoutes(),
    ...knowledgeRoutes(),
    ...jobsRoutes(),
    ...jobEventRoutes(),
    ...reasoningRoutes(),
    ...mcpRoutes(allRoutes),
    ...liveRoutes(),
    ...daemonsRoutes(),
    ...identityRoutes(),
    ...emailRoutes(),
    ...visionRoutes(),
    ...imagesRoutes(),
    ...vectorStoreRoutes(),
    ...capabilitiesRoutes(),
    ...browserRoutes(),
    ...agentsRoutes(),
    ...workspacesRoutes(),
    ...toolsPlanRoutes(),
  ];
  return cached;
}
