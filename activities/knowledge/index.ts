import type { ActivityDeps } from '../deps';
import { createLearnActivities } from './learn';

/** Activities of the knowledge area: the enterprise learning steps. */
export function createKnowledgeActivities(deps: ActivityDeps) {
  return {
    ...createLearnActivities(deps),
  };
}
