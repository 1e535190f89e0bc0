import { compilePlan } from '../activities/tools/plan-check';
import { writePlanSteps } from '../activities/tools/plan-writer';
import { toolRegistry, toolsFor } from '../activities/tools/registry';
import { insertPlan } from '../activities/store/tool-plans';
import { invalid } from '../schema/errors';
import type { PlanCreateBody, ToolPlan } from '../schema/tools-plans';
import { principalOf, type AppContext } from './context';
import { jobIdFor } from './idempotency';
import { modelsOf } from './routes/chat-shared';

/**
 * Compiles and stores a plan: the given steps, or steps the model writes for the goal from the
 * tools this key may use (validated the same way, one repair round).
 * @throws AppError invalid_request (JSON pointer details), forbidden, upstream_* (model-written)
 */
export async function createPlan(ctx: AppContext, body: PlanCreateBody): Promise<ToolPlan> {
  const p = principalOf(ctx);
  const known = new Set(toolRegistry().map((t) => t.name));
  const unknown = (body.tools ?? []).flatMap((t, i) =>
    known.has(t) ? [] : [{ path: `/tools/${i}`, message: `unknown tool "${t}"` }],
  );
  if (unknown.length) throw invalid(unknown, 'plan');
  let steps = body.steps;
  let source: ToolPlan['source'] = 'given';
  if (!steps) {
    const offered = toolsFor(p.scopes).filter((t) => !body.tools || body.tools.includes(t.name));
    if (!offered.length)
      throw invalid([{ path: '/tools', message: 'none of these tools is available to this key' }], 'plan');
    steps = (
      await writePlanSteps(modelsOf(ctx.deps), {
        goal: body.goal,
        context: body.context,
        constraints: body.constraints,
        tools: offered,
        scopes: p.scopes,
      })
    ).steps;
    source = 'model';
  }
  const compiled = compilePlan({ steps, scopes: p.scopes, allowedTools: body.tools });
  return insertPlan(ctx.deps.db, {
    // Derived under an Idempotency-Key (execute-plan with an inline plan): a retry stores no second plan.
    id: jobIdFor(ctx, 'tpl'),
    tenantId: p.tenantId,
    keyId: p.keyId,
    plan: { goal: body.goal, source, ...compiled },
  });
}
