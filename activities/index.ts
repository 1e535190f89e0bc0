import { createAgentActivities } from './agents/activities';
import { createBrowserStoreActivities } from './browser/store-activities';
import type { ActivityDeps } from './deps';
import { createEmailActivities } from './email';
import { createModelRouter } from './providers';
import { createJobsActivities } from './jobs';
import { createKnowledgeActivities } from './knowledge';
import { createLiveActivities } from './live';
import { createTasksActivities } from './tasks';
import { configureFileReading } from './web/extract-pool';
import { createResearchActivities } from './web/research-activities';
import { createPlanActivities } from './tools/plan-activities';
import { createResponseActivities } from './responses/background';
import { createBatchActivities } from './batches';
import { createMaintenanceActivities } from './maintenance';
import { createWebhookActivities } from './webhooks';
import { createVectorStoreActivities } from './vector-stores';

export type { ActivityDeps } from './deps';

/** Every activity the worker registers, closing over its dependencies (no module-level clients). */
export function createActivities(given: ActivityDeps) {
  // One model router for every activity family (and the API, when the caller passes its own).
  const deps: ActivityDeps = { ...given, models: given.models ?? createModelRouter(given.config, { log: given.log }) };
  configureFileReading({ memoryMb: deps.config.extractMemoryMb });
  return {
    /** Smoke activity: proves the round trip through the worker. */
    async echo(input: { message: string }): Promise<string> {
      deps.log.debug({ activity: 'echo' }, 'echo');
      return `echo: ${input.message}`;
    },
    ...createTasksActivities(deps),
    ...createKnowledgeActivities(deps),
    ...createJobsActivities(deps),
    ...createLiveActivities(deps),
    ...createEmailActivities(deps),
    ...createResearchActivities(deps),
    ...createBrowserStoreActivities(deps),
    ...createAgentActivities(deps),
    ...createPlanActivities(deps),
    ...createResponseActivities(deps),
    ...createBatchActivities(deps),
    ...createMaintenanceActivities(deps),
    ...createWebhookActivities(deps),
    ...createVectorStoreActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
