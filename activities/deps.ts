import type { Logger } from 'pino';
import type { Config } from '../schema/config';
import type { ModelRouter } from './providers/types';
import type { Db } from './store/db';

export interface ActivityDeps {
  config: Config;
  db: Db;
  log: Logger;
  /** The process's one model router (workers/runtime.ts builds it); absent: createActivities builds one. */
  models?: ModelRouter;
}
