import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { PlanRunStatus } from '../../schema/tools-plans';
import { workflowIds } from '../../schema/workflow-ids';
import type { ActivityDeps } from '../deps';
import { saveResult, setRunStatus, stepInputs } from '../store/tool-plans';
import { buildWorkerToolContext } from './context';
import { resolveRefs } from './plan-check';
import { findTool, runTool } from './registry';

type StepKey = { tenantId: string; runId: string; stepId: string };

/** Activities of plan runs (workflow plan-<run id>). */
export function createPlanActivities(deps: ActivityDeps) {
  const { db } = deps;
  async function runStep(k: StepKey): Promise<{ status: string }> {
    // Run, plan and stored results in one statement: each round trip is on every level's path
    // (the per-level overhead the plan bench measures).
    const read = await stepInputs(db, k.tenantId, k.runId);
    const stored = read?.results.find((r) => r.step_id === k.stepId);
    if (stored) return { status: stored.status };
    const step = read?.plan.steps.find((s) => s.id === k.stepId);
    if (!read || !step) throw ApplicationFailure.nonRetryable('The plan run is gone.', 'StaleRunError');
    const { run, results } = read;
    const done = results.filter((r) => r.status === 'completed');
    const args = resolveRefs(step.args, new Map(done.map((r) => [r.step_id, r.result])));
    const tool = findTool(step.tool, run.scopes);
    const out = tool
      ? await runTool(
          tool,
          args,
          buildWorkerToolContext(
            deps,
            { keyId: run.key_id, tenantId: run.tenant_id, kind: 'runtime', scopes: run.scopes, app: null },
            { surface: run.surface ?? undefined, idempotencyKey: `${workflowIds.plan(k.runId)}:${k.stepId}` },
          ),
        )
      : { ok: false as const, error: `The tool ${step.tool} is not available to this key.` };
    const saved = await saveResult(db, {
      ...k,
      status: out.ok ? 'completed' : 'failed',
      ...(out.ok ? { result: out.result } : { error: out.error }),
    });
    return { status: saved.status };
  }

  return {
    /**
     * Runs one step exactly once per run: a stored result is returned as is (a retry after the
     * first attempt stored it, or a replay on a new worker); otherwise the tool runs with the
     * run's key rights and its outcome is stored once (ON CONFLICT keeps the first).
     */
    async planRunStep(k: StepKey): Promise<{ status: string }> {
      // Heartbeats: a worker that dies mid-step is noticed within the heartbeat timeout, not the step's.
      const ctx = Context.current();
      // A local activity (fast in-process step) has no heartbeat: the workflow task covers it.
      const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), 1000);
      try {
        return await runStep(k);
      } finally {
        clearInterval(beat);
      }
    },
    /** Marks steps that will not run (a dependency failed, the run was cancelled) or whose activity gave up. */
    async planSettleSteps(o: {
      tenantId: string;
      runId: string;
      stepIds: string[];
      status: 'skipped' | 'cancelled' | 'failed';
      reason: string;
    }): Promise<void> {
      for (const stepId of o.stepIds)
        await saveResult(db, { tenantId: o.tenantId, runId: o.runId, stepId, status: o.status, error: o.reason });
    },
    async planSetStatus(o: { tenantId: string; runId: string; status: PlanRunStatus; awaiting: string[] }) {
      await setRunStatus(db, o);
    },
  };
}
