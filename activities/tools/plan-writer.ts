import { z } from 'zod';
import { AppError } from '../../schema/errors';
import { parseStorableJson } from '../../schema/storable';
import { PlanStepIn } from '../../schema/tools-plans';
import type { ModelRouter } from '../providers/types';
import { compilePlan } from './plan-check';
import { toolJsonSchemas } from './registry';
import type { ToolDef } from './types';

const Written = z.object({ steps: z.array(PlanStepIn).min(1).max(50) });

/** The answer format the model is held to (OpenAI response_format json_schema; args stay free-form). */
function answerSchema(tools: ToolDef[]) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['steps'],
    properties: {
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: 50,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'tool', 'args', 'depends_on'],
          properties: {
            id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
            tool: { type: 'string', enum: tools.map((t) => t.name) },
            args: { type: 'object' },
            depends_on: { type: 'array', items: { type: 'string' } },
            note: { type: 'string' },
          },
        },
      },
    },
  };
}

function problemsOf(err: unknown): string {
  if (err instanceof z.ZodError) return err.issues.map((i) => `${i.path.join('/')}: ${i.message}`).join('; ');
  if (err instanceof SyntaxError) return `the answer is not JSON (${err.message})`;
  if (err instanceof AppError) return err.details?.map((d) => `${d.path}: ${d.message}`).join('; ') || err.message;
  throw err;
}

/**
 * Asks the model for a plan under a JSON schema listing only the tools offered, validates it like
 * a given plan and, when it is invalid, sends the problems back once for a repair.
 * @throws AppError upstream_error when the repaired answer is still invalid (model errors pass through)
 */
export async function writePlanSteps(
  models: ModelRouter,
  o: { goal: string; context?: string; constraints?: string[]; tools: ToolDef[]; scopes: readonly string[] },
): Promise<{ steps: z.output<typeof PlanStepIn>[]; repaired: boolean }> {
  const catalog = o.tools.map((t) => ({
    name: t.name,
    description: t.description,
    arguments: toolJsonSchemas(t).input,
    flags: { read_only: t.readOnly, destructive: t.destructive, external: t.external },
  }));
  const messages: Parameters<ModelRouter['complete']>[0]['messages'] = [
    {
      role: 'system',
      content:
        'You plan tool calls. Answer with JSON {"steps": [...]}: each step has an id, a tool from the catalog, args ' +
        'valid for that tool, and depends_on. Steps without dependencies run in parallel. A string arg may be ' +
        '"{{steps.<id>.result.<path>}}" to use an earlier result. Use as few steps as the goal needs.\n' +
        `Tool catalog: ${JSON.stringify(catalog).slice(0, 200_000)}`,
    },
    {
      role: 'user',
      content: [
        `Goal: ${o.goal}`,
        o.context ? `Context: ${o.context}` : '',
        o.constraints?.length ? `Constraints:\n- ${o.constraints.join('\n- ')}` : '',
      ]
        .filter(Boolean)
        .join('\n\n'),
    },
  ];
  const format = {
    response_format: { type: 'json_schema', json_schema: { name: 'tool_plan', schema: answerSchema(o.tools) } },
  };
  let last = '';
  for (let round = 0; round < 2; round++) {
    const answer = await models.complete({
      lane: 'svc-oracle',
      messages,
      temperature: 0,
      extra: format,
      timeoutMs: 60_000,
    });
    try {
      const steps = Written.parse(parseStorableJson(answer.content)).steps;
      compilePlan({ steps, scopes: o.scopes, allowedTools: o.tools.map((t) => t.name) });
      return { steps, repaired: round > 0 };
    } catch (err) {
      last = problemsOf(err);
      messages.push(
        { role: 'assistant', content: answer.content },
        { role: 'user', content: `That plan is invalid: ${last}. Answer again with the corrected JSON only.` },
      );
    }
  }
  throw new AppError('upstream_error', `The model wrote an invalid plan twice (last problems: ${last.slice(0, 500)}).`);
}
