import { createBrowserStoreActivities } from './browser/store-activities';
import type { ActivityDeps } from './deps';
import { createJobsActivities } from './jobs';
import { createKnowledgeActivities } from './knowledge';
import { createTasksActivities } from './tasks';

export type { ActivityDeps } from './deps';

/** Every activity the worker registers, closing over its dependencies (no module-level clients). */
export function createActivities(deps: ActivityDeps) {
  return {
    /** Smoke activity: proves the round trip through the worker. */
    async echo(input: { message: string }): Promise<string> {
      deps.log.debug({ activity: 'echo' }, 'echo');
      return `echo: ${input.message}`;
    },
    ...createTasksActivities(deps),
    ...createKnowledgeActivities(deps),
    ...createJobsActivities(deps),
    ...createBrowserStoreActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
