import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityFailureMessage } from './failure';

const { agentModelTurn, agentDelegate } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '20 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['NotFound', 'DelegateFailed'],
  },
});
// Tool calls run once more at most: a tool's own failure is a step result, not an activity failure.
const { agentToolCall } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 2,
    nonRetryableErrorTypes: ['NotFound'],
  },
});
const { agentStart } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});
// Finishing a workspace run closes its browser session (waiting for one still opening): more time.
const { agentFinish } = proxyActivities<Activities>({
  startToCloseTimeout: '4 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

export interface AgentWorkflowInput {
  tenantId: string;
  runId: string;
  maxSteps: number;
  maxTokens: number;
  delegate: boolean;
}

const failureMessage = (err: unknown) => activityFailureMessage(err, 'the agent run failed');

/**
 * Agent run `agent-<runId>`: an OpenAI function-calling loop. Each model turn is an activity; the
 * tool calls a turn asks for run as parallel activities; outputs live in PostgreSQL by step key and
 * only ids and counters cross the workflow. At most `maxSteps` model turns (the last is offered no
 * tools, so it must answer) and at most `maxTokens` tokens; a code task with a delegate is handed
 * over instead. Cancellation and failure close the run in a non-cancellable scope.
 */
export async function agentWorkflow(input: AgentWorkflowInput): Promise<string> {
  const ref = { tenantId: input.tenantId, runId: input.runId };
  try {
    await agentStart(ref);
    if (input.delegate) {
      await agentDelegate(ref);
      await agentFinish({ ...ref, status: 'completed', stopReason: 'delegated' });
      return 'delegated';
    }
    let tokens = 0;
    for (let step = 1; step <= input.maxSteps; step++) {
      const final = step === input.maxSteps;
      const turn = await agentModelTurn({ ...ref, step, final, maxTokens: input.maxTokens - tokens });
      tokens += turn.tokens;
      if (turn.done) {
        await agentFinish({ ...ref, status: 'completed', stopReason: turn.cut ? 'max_steps' : 'answered' });
        return 'completed';
      }
      await Promise.all(turn.callIds.map((callId) => agentToolCall({ ...ref, step, callId })));
      if (tokens >= input.maxTokens) {
        await agentFinish({ ...ref, status: 'completed', stopReason: 'max_tokens' });
        return 'completed';
      }
    }
    // Unreachable in practice (the last turn is always final); kept so the loop has one exit per bound.
    await agentFinish({ ...ref, status: 'completed', stopReason: 'max_steps' });
    return 'completed';
  } catch (err) {
    const status = isCancellation(err) ? 'cancelled' : 'failed';
    await CancellationScope.nonCancellable(() =>
      agentFinish({ ...ref, status, ...(status === 'failed' ? { error: failureMessage(err) } : {}) }),
    );
    throw err;
  }
}
