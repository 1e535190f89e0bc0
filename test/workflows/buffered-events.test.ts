import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { randomToken } from '../../activities/store/ids';
import { gate, temporalConnections } from './mocked-worker';

const EventType = temporal.api.enums.v1.EventType;
const N = 80; // 79 branches end during one workflow task: 158 held events, over the server's stock limit of 100

const conns = temporalConnections();
let bundle: string;
beforeAll(async () => {
  ({ code: bundle } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./buffered/fanout-workflow'),
    logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
  }));
});

test('a wide fan-out whose branches end while a workflow task is open keeps that task (our dev servers hold up to 1,000 events)', async () => {
  const { client } = conns;
  const taskQueue = `buffered-${randomToken(8)}`;
  const held = gate();
  let ended = 0;
  const others = gate();
  const worker = await Worker.create({
    connection: conns.workerConn,
    taskQueue,
    workflowBundle: { code: bundle },
    maxConcurrentActivityTaskExecutions: N,
    activities: {
      async branch(i: number) {
        // The first ends at once; the rest only once the workflow task after it is held open.
        if (i > 0) {
          await held.promise;
          if (++ended === N - 1) others.open();
        }
        return i;
      },
      async hold() {
        held.open();
        await others.promise;
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
