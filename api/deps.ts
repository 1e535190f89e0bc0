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
    /**
     * A client on the connection of this process's own worker (the all-in-one process, `npm start`):
     * workflow starts go through it with Eager Workflow Start, so the server hands the first workflow
     * task straight back to that worker instead of through its matching service. Absent when no
     * worker runs in the process (`npm run api`, API processes of a cluster).
     */
    eager?: Client;
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
