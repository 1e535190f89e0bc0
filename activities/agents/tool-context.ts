import { Client, Connection } from '@temporalio/client';
import type { ActivityDeps } from '../deps';
import type { KeyPrincipal } from '../store/keys';
import { findTool } from '../tools/registry';
import type { ToolContext, ToolDef } from '../tools/types';

/**
 * A worker-side ToolContext for agent runs. The registry's context wants the API's dependencies;
 * a worker has config, db and log, and gets a Temporal client here only when a tool asks for one
 * (lazy: most tools never do). No route table on a worker: capability listings come out empty.
 * Interim: the lead unifies this with the plans room's worker context.
 */
export function createWorkerToolContexts(deps: ActivityDeps) {
  let temporal: { connection: Connection; client: Client } | undefined;
  const getTemporal = () => {
    if (!temporal) {
      const address = deps.config.temporal.address ?? `127.0.0.1:${deps.config.temporal.devPort}`;
      const connection = Connection.lazy({ address });
      temporal = { connection, client: new Client({ connection, namespace: deps.config.temporal.namespace }) };
    }
    return temporal;
  };
  return {
    contextFor(principal: KeyPrincipal): ToolContext {
      return {
        principal,
        deps: {
          config: deps.config,
          db: deps.db,
          log: deps.log,
          get temporal() {
            return getTemporal();
          },
        },
        routes: () => [],
      };
    },
    /** A registry tool the run may call: in the run's tier list and allowed for the starting key. */
    toolFor(name: string, principal: KeyPrincipal, allowed: readonly string[]): ToolDef | undefined {
      return allowed.includes(name) ? findTool(name, principal.scopes) : undefined;
    },
    async close() {
      await temporal?.connection.close();
    },
  };
}
