import { z } from 'zod';
import { AgentDraft } from '../../schema/agents';
import { AppError } from '../../schema/errors';
import type { ChatMessageIn, ModelRouter } from '../providers/types';
import type { ToolDef } from '../tools/types';
import { jsonIn } from '../providers/json-answer';

const draftJsonSchema = (() => {
  const s = z.toJSONSchema(AgentDraft, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete s.$schema;
  return s;
})();

/**
 * An agent definition written by the model under a JSON schema (structured output), then checked:
 * a shape error gets one repair round with the errors quoted back; tools that do not exist or that
 * the key may not use are dropped and reported (`dropped`), never stored.
 * @throws AppError upstream_error when the model gives no valid definition after the repair round
 */
export async function draftAgent(
  models: ModelRouter,
  o: { description: string; tools: ToolDef[]; extraTools: string[] },
): Promise<{ draft: AgentDraft; dropped: string[] }> {
  const catalog = [
    ...o.tools.map((t) => `- ${t.name}: ${t.description.slice(0, 160)}`),
    ...o.extraTools.map((n) => `- ${n}: workspace tool (only inside POST /v1/workspaces/run)`),
  ].join('\n');
  const messages: ChatMessageIn[] = [
    {
      role: 'system',
      content:
        'You design agents. From the description, write one agent definition as JSON matching the given schema: ' +
        'a short name, instructions (second person, concrete), the tools it needs (only names from the list), ' +
        'a model lane (svc-oracle, mid, mid-strong, micro, nano, slm-fast, slm-code, slm-reason), a tier ' +
        '(quick, standard, deep, code) and guardrails.\n\nAvailable tools:\n' +
        catalog,
    },
    { role: 'user', content: o.description },
  ];
  let parsed: z.ZodSafeParseResult<AgentDraft> | undefined;
  for (let round = 0; round < 2; round++) {
    const res = await models.complete({
      lane: 'svc-oracle',
      messages,
      temperature: 0.2,
      max_tokens: 2000,
      timeoutMs: 60_000,
      extra: {
        response_format: { type: 'json_schema', json_schema: { name: 'agent_definition', schema: draftJsonSchema } },
      },
    });
    parsed = AgentDraft.safeParse(jsonIn(res.content));
    if (parsed.success) break;
    messages.push(
      { role: 'assistant', content: res.content },
      {
        role: 'user',
        content: `That is not a valid definition: ${parsed.error.issues
          .slice(0, 8)
          .map((i) => `${i.path.join('.') || 'root'}: ${i.message}`)
          .join('; ')}. Answer again with JSON only.`,
      },
    );
  }
  if (!parsed?.success)
    throw new AppError('upstream_error', 'The model did not write a valid agent definition (after one repair round).');
  const allowed = new Set([...o.tools.map((t) => t.name), ...o.extraTools]);
  const tools = [...new Set(parsed.data.tools)];
  return {
    draft: { ...parsed.data, tools: tools.filter((t) => allowed.has(t)) },
    dropped: tools.filter((t) => !allowed.has(t)),
  };
}
