import { commonsOpenAiTools, commonsToolList, MAX_TOOL_CALLS, runCommonsTool } from '../../activities/commons';
import type { ChatMessageIn, ModelUsage } from '../../activities/providers/types';
import { ChatCompletionResponse, CommonsToolList, UtilityChatRequest } from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { laneFor, SLM_LANES } from './chat-lanes';
import {
  abortOnDisconnect,
  completionBody,
  completionId,
  modelsFor,
  samplingOf,
  sumUsage,
  unlessClientGone,
} from './chat-shared';
import { readUtilityChatRequest } from '../../schema/chat-read';
import { keeperFor } from './chat-stored';

const CHAT = { scope: 'runtime:chat' } as const;
const PATH = '/v1/slm/commons/completions';

/**
 * The commons lane: the model may request at most MAX_TOOL_CALLS tool calls in all (OpenAI
 * tool-calling protocol); calls beyond the budget get a refusal result, and once the budget is
 * spent the next call offers no tools, so the model has to answer. At most three upstream calls.
 */
async function commonsCompletion(ctx: AppContext, body: UtilityChatRequest) {
  if (body.stream) {
    throw new AppError('invalid_request', 'Streaming is not supported on the commons lane; send stream: false.', {
      details: [{ path: 'body.stream', message: 'must be false on this route' }],
    });
  }
  if ((body.n ?? 1) > 1) {
    throw new AppError('invalid_request', 'The commons lane answers one choice; send n: 1 or leave it out.', {
      details: [{ path: 'body.n', message: 'must be 1 on this route' }],
    });
  }
  const lane = laneFor(PATH, SLM_LANES, body.model);
  const models = modelsFor(ctx);
  const abort = abortOnDisconnect(ctx);
  const messages: ChatMessageIn[] = body.messages.map((m) => ({ role: m.role, content: m.content }));
  const ran: Array<{ name: string; ok: boolean }> = [];
  let usage: ModelUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (;;) {
    const budget = MAX_TOOL_CALLS - ran.length;
    const result = await unlessClientGone(abort, () =>
      models.complete({
        lane,
        messages,
        ...samplingOf(body),
        signal: abort.signal,
        ...(budget > 0 ? { tools: commonsOpenAiTools(), tool_choice: 'auto' } : {}),
      }),
    );
    usage = sumUsage(usage, result.usage);
    const calls = result.tool_calls ?? [];
    if (calls.length === 0 || budget <= 0) {
      const answer = completionBody({
        id: completionId(),
        lane,
        result: { ...result, usage },
        meta: { sass_factor: 0, tool_calls: ran },
      });
      await keeperFor(ctx, body)?.(answer);
      return answer;
    }
    messages.push({ role: 'assistant', content: result.content || null, tool_calls: calls });
    for (const call of calls) {
      if (ran.length >= MAX_TOOL_CALLS) {
        const refusal = JSON.stringify({
          error: `tool-call limit reached (${MAX_TOOL_CALLS} per request); answer with the results you have`,
        });
        messages.push({ role: 'tool', tool_call_id: call.id, content: refusal });
        continue;
      }
      const r = runCommonsTool(call.function.name, call.function.arguments);
      ran.push({ name: call.function.name, ok: r.ok });
      messages.push({ role: 'tool', tool_call_id: call.id, content: r.content });
    }
  }
}

export function chatCommonsRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/slm/commons/tools',
      access: CHAT,
      summary: 'The commons toolbox (bounded utilities; no browsing, files, shell, memory or outside writes).',
      tags: ['utility lanes'],
      response: CommonsToolList,
      handler: () => ({ object: 'list' as const, max_tool_calls: MAX_TOOL_CALLS, data: commonsToolList() }),
    }),
    defineRoute({
      method: 'post',
      path: PATH,
      access: CHAT,
      summary: `Small model with the commons toolbox: at most ${MAX_TOOL_CALLS} tool calls, then an answer. Streaming is refused (400).`,
      tags: ['utility lanes'],
      metered: true,
      conversation: true,
      body: UtilityChatRequest,
      readBody: readUtilityChatRequest,
      response: ChatCompletionResponse,
      responses: {
        404: 'Model not served here.',
        502: 'Upstream failed.',
        503: 'No provider configured.',
        504: 'Upstream timed out.',
      },
      example: { model: 'slm-fast', messages: [{ role: 'user', content: 'What is 17% of 2,340?' }] },
      handler: (ctx: AppContext, { body }) => commonsCompletion(ctx, body),
    }),
  ];
}
