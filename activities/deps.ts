import type { Logger } from 'pino';
import type { Config } from '../schema/config';
import type { Db } from './store/db';

export interface ActivityDeps {
  config: Config;
  db: Db;
  log: Logger;
}
