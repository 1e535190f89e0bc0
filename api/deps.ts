import type { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../schema/config';
import type { Db } from '../activities/store/db';
import type { ModelRouter } from '../activities/providers/types';
import type { Lifecycle } from './lifecycle';
import type { EventListener } from '../activities/store/event-listener';
import type { Gateway } from './gateway';

/** Everything the API needs, built by a process entry and passed to `createApp`. */
export interface AppDeps {
  config: Config;
  db: Db;
  log: Logger;
  temporal: {
    connection: Connection;
    client: Client;
  };
  /** Model router; when absent the chat routes build one from `config` (once per deps object). */
  models?: ModelRouter;
  /** Draining on shutdown (SSE streams end with a retry hint); absent in tests that never drain. */
  lifecycle?: Lifecycle;
  /** Gateway caches, limits and usage; when absent one is built per deps object (closed by nobody: tests). */
  gateway?: Gateway;
  /** The process's LISTEN client for event streams; when absent one is built per deps object. */
  listener?: EventListener;
}
