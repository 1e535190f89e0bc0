import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomToken } from '../../activities/store/ids';
import type { WorkflowName } from '../../api/start-workflow';
import type * as workflows from '../../workflows';
import { testEnv } from '../helpers/harness';

/** A client and a worker connection to the run's real dev server: opened in beforeAll, closed in afterAll. */
export function temporalConnections(): { readonly client: Client; readonly workerConn: NativeConnection } {
  let client: Client;
  let clientConn: Connection;
  let workerConn: NativeConnection;
  beforeAll(async () => {
    const { temporalAddress } = testEnv();
    clientConn = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection: clientConn });
    workerConn = await NativeConnection.connect({ address: temporalAddress });
  });
  afterAll(async () => {
    await clientConn?.close();
    await workerConn?.close();
  });
  return {
    get client() {
      return client;
    },
    get workerConn() {
      return workerConn;
    },
  };
}

/**
 * One workflow at a time against the run's real dev server, with mocked activities (no database,
 * no model): connects in beforeAll, closes in afterAll. Each run gets its own task queue.
 */
export function mockedWorkflows() {
  const temporal = temporalConnections();

  /**
   * Starts workflow `name` with `args` on a worker running `activities`, calls `during` with its
   * handle while the worker runs, and settles once both the workflow and `during` have.
   * @returns the workflow's result, or its error (never throws it)
   */
  async function run<N extends WorkflowName, T = void>(
    name: N,
    args: Parameters<(typeof workflows)[N]>,
    activities: Record<string, (...a: any[]) => Promise<unknown>>,
    during?: (h: WorkflowHandle<(typeof workflows)[N]>) => Promise<T>,
  ): Promise<{ result?: Awaited<ReturnType<(typeof workflows)[N]>>; error?: Error; during?: T }> {
    const taskQueue = `wf-${randomToken(8)}`;
    const worker = await Worker.create({
      connection: temporal.workerConn,
      taskQueue,
      workflowBundle: { codePath: testEnv().bundlePath },
      activities,
      // Cancellation reaches an activity on its next heartbeat: send them promptly.
      maxHeartbeatThrottleInterval: '200 ms',
      defaultHeartbeatThrottleInterval: '200 ms',
    });
    return worker.runUntil(async () => {
      const handle = await temporal.client.workflow.start<Workflow>(name, {
        taskQueue,
        workflowId: `${name}-${randomToken(8)}`,
        args: args as unknown[],
      });
      const typed = handle as unknown as WorkflowHandle<(typeof workflows)[N]>;
      const [outcome, extra] = await Promise.all([
        typed.result().then(
          (result) => ({ result: result as Awaited<ReturnType<(typeof workflows)[N]>> }),
          (error: Error) => ({ error }),
        ),
        during?.(typed),
      ]);
      return { ...outcome, during: extra };
    });
  }
  return { run };
}

/** A promise with its resolve function, for activities that wait on the test. */
export function gate<T = void>(): { promise: Promise<T>; open(v: T): void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}
