import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import { SWEEP_CHUNK, sweepExpiredOnce } from '../store/retention';

/** Chunks one sweep deletes at most (the next hour's sweep takes the rest). */
const MAX_ROUNDS = 100;

export function createMaintenanceActivities(deps: ActivityDeps) {
  return {
    /**
     * Deletes expired stored responses (with a background response's events) and expired files of every tenant, a
     * thousand rows a statement, heartbeating, until none is left or 100 rounds ran.
     */
    async sweepExpired(): Promise<{ responses: number; files: number }> {
      const total = { responses: 0, files: 0 };
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const r = await sweepExpiredOnce(deps.db);
        total.responses += r.responses;
        total.files += r.files;
        Context.current().heartbeat(total);
        if (r.responses < SWEEP_CHUNK && r.files < SWEEP_CHUNK) break;
      }
      if (total.responses || total.files) deps.log.info(total, 'expired responses and files removed');
      return total;
    },
  };
}
