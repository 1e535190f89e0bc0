import { z } from 'zod';
import type { ModelResult, ModelStreamChunk, ModelUsage } from '../../activities/providers/types';
import {
  chatCompletionMessages,
  deleteChatCompletion,
  getChatCompletion,
  listChatCompletions,
  saveChatCompletion,
  updateChatCompletion,
  type StoredCompletionRow,
} from '../../activities/store/chat-completions';
import {
  ChatCompletionDeleted,
  ChatCompletionId,
  ChatCompletionList,
  ChatCompletionMessageList,
  ListChatCompletionsQuery,
  ListStoredMessagesQuery,
  StoredChatCompletion,
  UpdateChatCompletionBody,
} from '../../schema/chat-stored';
import { notFound } from '../../schema/errors';
import { principalOf, type AppContext } from '../context';
import { cursorPage, unknownCursor } from '../list-page';
import { defineRoute, type RouteSpec } from '../route';
import type { completionBody } from './chat-shared';

/** A chat completion object as answered (`completionBody`). */
export type Completion = ReturnType<typeof completionBody>;
type ModelStream = AsyncIterable<ModelStreamChunk> & { provider: Promise<string> };

/**
 * A lane's stream passed on chunk for chunk while its choice is gathered as `complete` would have answered it (text,
 * finish reason, tool calls, usage, log probabilities), for storing a streamed completion.
 */
export function recordStream(s: ModelStream): { stream: ModelStream; result: (provider: string) => ModelResult } {
  let content = '';
  let finish = 'stop';
  let usage: ModelUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let estimated: boolean | undefined;
  let calls: ModelResult['tool_calls'];
  let logprobs: { content: unknown[] } | undefined;
  async function* pass(): AsyncGenerator<ModelStreamChunk> {
    for await (const c of s) {
      content += c.delta;
      if (c.finish_reason) finish = c.finish_reason;
      if (c.usage) {
        usage = c.usage;
        estimated = c.usage_estimated;
      }
      if (c.tool_calls?.length) calls = c.tool_calls;
      const lp = (c.logprobs as { content?: unknown } | undefined)?.content;
      if (Array.isArray(lp)) (logprobs ??= { content: [] }).content.push(...(lp as unknown[]));
      yield c;
    }
  }
  const it = pass();
  return {
    stream: { provider: s.provider, [Symbol.asyncIterator]: () => it },
    result: (provider) => ({
      content,
      finish_reason: finish,
      usage,
      provider,
      ...(estimated ? { usage_estimated: true } : {}),
      ...(calls ? { tool_calls: calls } : {}),
      ...(logprobs ? { logprobs } : {}),
    }),
  };
}

/** What a chat request says of storing its completion. */
interface StoreFields {
  store?: boolean;
  metadata?: Record<string, string>;
  messages: unknown[];
}

/**
 * How a chat route stores its completion when the request asks (`store: true`): with the request's messages and
 * metadata, before the answer ends (the JSON body, or the stream's last chunk), so the completion can be read as
 * soon as the client has it. Undefined when the request does not ask.
 */
export function keeperFor(ctx: AppContext, body: StoreFields): ((c: Completion) => Promise<void>) | undefined {
  if (body.store !== true) return undefined;
  const { tenantId } = principalOf(ctx);
  const requestId = ctx.state.requestId as string | undefined;
  return (c) =>
    saveChatCompletion(ctx.deps.db, {
      tenantId,
      id: c.id,
      model: c.model,
      metadata: body.metadata ?? {},
      messages: body.messages,
      completion: { ...c, ...(requestId ? { request_id: requestId } : {}) },
    });
}

/** The stored completion as OpenAI answers it: the completion as answered, with its metadata now. */
const storedObject = (r: StoredCompletionRow) => ({ ...r.completion, id: r.id, metadata: r.metadata });

/** OpenAI's message object of a request message kept with a stored completion (`<completion id>-<index>`). */
function messageObject(id: string, m: Record<string, unknown>, index: number) {
  const parts = Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : null;
  const text = parts
    ?.filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
  return {
    id: `${id}-${index}`,
    role: m.role,
    content: parts ? text || null : ((m.content as string | null | undefined) ?? null),
    name: (m.name as string | undefined) ?? null,
    content_parts: parts,
    ...(m.tool_calls !== undefined ? { tool_calls: m.tool_calls } : {}),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
  };
}

const access = { scope: 'runtime:chat' } as const;
const tags = ['chat'];
const IdParams = z.object({ id: ChatCompletionId });
const unknownCompletion = () => notFound('Stored chat completion');

/** OpenAI's stored chat completions: list, retrieve, update metadata, delete, and the request's messages. */
export function storedCompletionRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/chat/completions',
      access,
      tags,
      summary:
        'The completions stored with store: true, oldest first by default (model, metadata[key]=value, after, limit, order as OpenAI).',
      query: ListChatCompletionsQuery,
      response: ChatCompletionList,
      handler: async (ctx: AppContext, { query }) => {
        const rows = await listChatCompletions(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...query });
        if (!rows) throw unknownCursor(query.after!, 'stored chat completion', 'among your stored completions');
        return cursorPage(rows, query.limit, storedObject);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/chat/completions/:id',
      access,
      tags,
      summary:
        'A completion stored with store: true, as it was answered, with its metadata (404 once deleted or expired).',
      params: IdParams,
      response: StoredChatCompletion,
      handler: async (ctx: AppContext, { params }) => {
        const row = await getChatCompletion(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!row) throw unknownCompletion();
        return storedObject(row);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/chat/completions/:id',
      access,
      tags,
      summary: "Replaces a stored completion's metadata (the only change OpenAI allows).",
      params: IdParams,
      body: UpdateChatCompletionBody,
      response: StoredChatCompletion,
      example: { metadata: { reviewed: 'yes' } },
      handler: async (ctx: AppContext, { params, body }) => {
        const row = await updateChatCompletion(ctx.deps.db, principalOf(ctx).tenantId, params.id, body.metadata);
        if (!row) throw unknownCompletion();
        return storedObject(row);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/chat/completions/:id',
      access,
      tags,
      summary: 'Deletes a stored completion.',
      params: IdParams,
      response: ChatCompletionDeleted,
      handler: async (ctx: AppContext, { params }) => {
        if (!(await deleteChatCompletion(ctx.deps.db, principalOf(ctx).tenantId, params.id))) throw unknownCompletion();
        return { object: 'chat.completion.deleted' as const, id: params.id, deleted: true as const };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/chat/completions/:id/messages',
      access,
      tags,
      summary: "A stored completion's request messages (ids <completion id>-<index>; after, limit, order as OpenAI).",
      params: IdParams,
      query: ListStoredMessagesQuery,
      response: ChatCompletionMessageList,
      handler: async (ctx: AppContext, { params, query }) => {
        const messages = await chatCompletionMessages(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!messages) throw unknownCompletion();
        let all = messages.map((m, i) => messageObject(params.id, m, i));
        if (query.order === 'desc') all = all.reverse();
        let from = 0;
        if (query.after !== undefined) {
          from = all.findIndex((m) => m.id === query.after) + 1;
          if (from === 0) throw unknownCursor(query.after, 'message', 'in this stored completion');
        }
        return cursorPage(all.slice(from, from + query.limit + 1), query.limit, (m) => m);
      },
    }),
  ];
}
