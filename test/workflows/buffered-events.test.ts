import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { randomToken } from '../../activities/store/ids';
import { testEnv } from '../helpers/harness';

const EventType = temporal.api.enums.v1.EventType;
const N = 80; // 79 branches end during one workflow task: 158 held events, over the server's stock limit of 100

let clientConn: Connection;
let workerConn: NativeConnection;
let bundle: string;
beforeAll(async () => {
  const { temporalAddress } = testEnv();
  clientConn = await Connection.connect({ address: temporalAddress });
  workerConn = await NativeConnection.connect({ address: temporalAddress });
  ({ code: bundle } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./buffered/fanout-workflow'),
    logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
  }));
});
afterAll(async () => {
  await clientConn?.close();
  await workerConn?.close();
});

test('a wide fan-out whose branches end while a workflow task is open keeps that task (our dev servers hold up to 1,000 events)', async () => {
  const client = new Client({ connection: clientConn });
  const taskQueue = `buffered-${randomToken(8)}`;
  let holding!: () => void;
  const held = new Promise<void>((r) => (holding = r));
  let ended = 0;
  let allEnded!: () => void;
  const others = new Promise<void>((r) => (allEnded = r));
  const worker = await Worker.create({
    connection: workerConn,
    taskQueue,
    workflowBundle: { code: bundle },
    maxConcurrentActivityTaskExecutions: N,
    activities: {
      async branch(i: number) {
        // The first ends at once; the rest only once the workflow task after it is held open.
        if (i > 0) {
          await held;
          if (++ended === N - 1) allEnded();
        }
        return i;
      },
      async hold() {
        holding();
        await others;
        await new Promise((r) => setTimeout(r, 1_000)); // their completions reach the server meanwhile
      },
    },
  });
  const workflowId = `buffered-${randomToken(8)}`;
  const result = await worker.runUntil(
    client.workflow.execute('bufferedFanout', { taskQueue, workflowId, args: [N], workflowExecutionTimeout: '2 min' }),
  );
  expect(result).toBe(N);
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const types = (events ?? []).map((e) => e.eventType);
  // No workflow task was force-closed (FORCE_CLOSE_COMMAND, what the stock limit does here) or timed out.
  expect(types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
  expect(types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)).toEqual([]);
  // And the scenario happened: the local activity's marker, then every branch held during its task.
  const marker = types.indexOf(EventType.EVENT_TYPE_MARKER_RECORDED);
  expect(marker).toBeGreaterThan(0);
  expect(types.slice(marker).filter((t) => t === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).toHaveLength(N - 1);
});
