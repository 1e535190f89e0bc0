import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import { SWEEP_CHUNK, sweepExpiredOnce, type Swept } from '../store/retention';

/** Chunks one sweep deletes at most (the next hour's sweep takes the rest). */
const MAX_ROUNDS = 100;

export function createMaintenanceActivities(deps: ActivityDeps) {
  return {
    /**
     * Deletes expired stored responses (with a background response's events), expired files, expired stored chat
     * completions, expired uploads' parts and old upload rows of every tenant, a thousand rows a statement,
     * heartbeating, until none is left or 100 rounds ran.
     */
    async sweepExpired(): Promise<Swept> {
      const total: Swept = { responses: 0, files: 0, chatCompletions: 0, uploadParts: 0, uploads: 0 };
      const kinds = Object.keys(total) as Array<keyof Swept>;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const r = await sweepExpiredOnce(deps.db);
        for (const k of kinds) total[k] += r[k];
        Context.current().heartbeat(total);
        if (kinds.every((k) => r[k] < SWEEP_CHUNK)) break;
      }
      if (kinds.some((k) => total[k] > 0))
        deps.log.info(total, 'expired responses, files, chat completions and uploads removed');
      return total;
    },
  };
}
