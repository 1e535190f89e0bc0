import { z } from 'zod';
import {
  deleteResponse,
  getInputItems,
  getResponse,
  getResponseRow,
  responseChain,
  saveResponse,
} from '../../activities/store/responses';
import type { ChatCompletionRequest } from '../../schema/chat';
import { AppError, notFound } from '../../schema/errors';
import { ChatHeaders, ResumeHeaders } from '../../schema/headers';
import { readChatHeaders } from '../../schema/chat-read';
import {
  type CompactRequest,
  CreateResponseRequest,
  type CustomTool,
  DeletedResponse,
  InputItemList,
  InputItemsQuery,
  InputTokenCount,
  chosenBuiltin,
  isBuiltin,
  ResponseId,
  RetrieveResponseQuery,
  ResponseObject,
} from '../../schema/responses';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { lastEventIdOf } from '../sse';
import { cursorPage, unknownCursor } from '../list-page';
import { preparePersonaCall } from './chat-persona';
import { addConversationItems, conversationContext } from '../../activities/store/conversations';
import { tenantFiles } from './chat-parts';
import { checkedLane, modelsFor, unlessClientGone } from './chat-shared';
import { DEFAULT_LANE } from '../../schema/model-config';
import {
  itemsToMessages,
  normalizeInput,
  outputAsInput,
  readInputFiles,
  responseStatus,
  screenshotFromFile,
  withOutcome,
  type OutputItem,
  type ResponseOutcome,
  type StoredItem,
} from './responses-items';
import { sendResponseStream, type ResponseSnapshot } from './responses-sse';
import { cancelBackgroundResponse, queueBackgroundResponse, streamBackgroundResponse } from './responses-background';
import { randomToken } from '../../activities/store/ids';
import { builtinLead, runBuiltins } from './responses-builtins';
import { FILE_SEARCH_RESULTS } from './responses-file-search';
import { compactionRoutes, compactionSummaries } from './responses-compaction';
import { countInputTokens } from '../../activities/providers/token-count';
import { completeResponse, mcpApprovals, ServerTools, withServerLead } from './responses-server-tools';
import { builtinAsFunction, builtinKind } from './responses-shell';
import { imageToolEcho } from './responses-image-gen';
import { IMAGE_GENERATION } from '../../schema/responses-image-gen';
import { type ClientBuiltin, isClientBuiltin } from '../../schema/responses-shell';

const CHAT = { scope: 'runtime:chat' } as const;

/**
 * A custom (freeform) tool as the lane takes it: a function of one string parameter, `input`, with the tool's
 * grammar, if any, in the description (a chat model has no grammar-constrained sampling to hand it to).
 */
function customAsFunction(t: CustomTool) {
  const grammar =
    t.format?.type === 'grammar'
      ? `The input must match this ${t.format.syntax === 'lark' ? 'Lark grammar' : 'regular expression'}:\n${t.format.definition}`
      : '';
  const description = [t.description ?? '', grammar].filter(Boolean).join('\n\n');
  return {
    type: 'function' as const,
    function: {
      name: t.name,
      ...(description ? { description: description.slice(0, 70_000) } : {}),
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: `The input of ${t.name}, as free text.` } },
        required: ['input'],
        additionalProperties: false,
      },
    },
  };
}

/**
 * The kinds of the calls a response may make that are not function calls: the custom tools' names (custom_tool_call
 * items), and an entry for each built-in client tool offered (`builtinKind`; `@shell:local` for a shell tool whose
 * environment is local).
 */
const callKinds = (b: CreateResponseRequest) =>
  new Set(
    (b.tools ?? []).flatMap((t) =>
      t.type === 'custom'
        ? [t.name]
        : t.type === 'shell'
          ? [builtinKind('shell'), ...(t.environment ? [`${builtinKind('shell')}:local`] : [])]
          : isClientBuiltin(t.type)
            ? [builtinKind(t.type)]
            : [],
    ),
  );

type ClientTool = Extract<
  NonNullable<CreateResponseRequest['tools']>[number],
  { type: 'function' | 'custom' | ClientBuiltin }
>;

/**
 * The tools the client runs (function, custom, and the built-in shell, apply_patch, local_shell and computer tools),
 * undefined when none: file and web search are this service's own.
 */
function clientTools(b: CreateResponseRequest): ClientTool[] | undefined {
  const tools = b.tools?.filter(
    (t): t is ClientTool => t.type === 'function' || t.type === 'custom' || isClientBuiltin(t.type),
  );
  return tools?.length ? tools : undefined;
}

/**
 * The tools the lane is offered: the client's (function, custom and built-in, as functions), then the server-run ones
 * (the MCP servers' tools, image_generation).
 */
function laneTools(b: CreateResponseRequest, remoteTools: ReturnType<ServerTools['laneTools']>) {
  const own = (clientTools(b) ?? []).map((t) =>
    t.type === 'custom'
      ? customAsFunction(t)
      : t.type !== 'function'
        ? builtinAsFunction(t)
        : {
            type: 'function' as const,
            function: {
              name: t.name,
              ...(t.description != null ? { description: t.description } : {}),
              ...(t.parameters != null ? { parameters: t.parameters } : {}),
              ...(t.strict != null ? { strict: t.strict } : {}),
            },
          },
  );
  const all = [...own, ...remoteTools];
  return all.length ? all : undefined;
}

/** The request's fields as the chat pipeline takes them (the lane, sampling, structured output, tools). */
function chatFields(b: CreateResponseRequest, mcp?: ServerTools): Omit<ChatCompletionRequest, 'messages'> {
  const remoteTools = mcp?.laneTools() ?? [];
  const format = b.text?.format ?? undefined;
  const logprobs = b.include?.includes('message.output_text.logprobs') ? true : undefined;
  return {
    model: b.model,
    profile: b.profile,
    svc_skills: b.svc_skills,
    stream: b.stream,
    temperature: b.temperature,
    top_p: b.top_p,
    max_tokens: b.max_output_tokens,
    response_format:
      format?.type === 'json_schema'
        ? {
            type: 'json_schema',
            json_schema: {
              name: format.name,
              schema: format.schema,
              ...(format.description != null ? { description: format.description } : {}),
              ...(format.strict != null ? { strict: format.strict } : {}),
            },
          }
        : (format ?? undefined),
    reasoning_effort: b.reasoning?.effort,
    verbosity: b.text?.verbosity,
    user: b.safety_identifier ?? b.user,
    logprobs,
    top_logprobs: logprobs ? b.top_logprobs : undefined,
    // Stored as a response (store and metadata are the response's own), not as a chat completion; the hints the chat
    // route accepts and does not act on are the response's own too.
    store: undefined,
    metadata: undefined,
    modalities: undefined,
    service_tier: undefined,
    prompt_cache_key: undefined,
    prompt_cache_retention: undefined,
    safety_identifier: undefined,
    prediction: undefined,
    web_search_options: undefined,
    tools: laneTools(b, remoteTools),
    // Built-in tools run before the lane whatever the choice: a choice of one (or `required` with no other tool) is met.
    tool_choice:
      typeof b.tool_choice === 'object'
        ? b.tool_choice.type === 'mcp'
          ? (mcp?.choiceFor(b.tool_choice) as ChatCompletionRequest['tool_choice'])
          : 'name' in b.tool_choice
            ? { type: 'function', function: { name: b.tool_choice.name } }
            : b.tool_choice.type === 'image_generation'
              ? { type: 'function', function: { name: IMAGE_GENERATION } }
              : isClientBuiltin(b.tool_choice.type === 'computer_use' ? 'computer' : b.tool_choice.type)
                ? { type: 'function', function: { name: chosenBuiltin(b.tools, b.tool_choice.type)!.type } }
                : undefined
        : b.tool_choice === 'required' && !clientTools(b) && !remoteTools.length
          ? undefined
          : b.tool_choice,
    parallel_tool_calls: b.parallel_tool_calls,
    // Chat fields the Responses API does not have.
    stop: undefined,
    presence_penalty: undefined,
    frequency_penalty: undefined,
    seed: undefined,
    n: undefined,
    max_completion_tokens: undefined,
    logit_bias: undefined,
  };
}

/**
 * The Response object of a request before its outcome (see `withOutcome`): OpenAI's fields with the request's settings
 * echoed, and our meta block (its provider set when known).
 */
function responseBase(
  b: CreateResponseRequest,
  r: { id: string; createdAt: number; lane: string; meta: Record<string, unknown> },
) {
  return {
    id: r.id,
    object: 'response' as const,
    created_at: r.createdAt,
    status: 'queued' as ResponseOutcome['status'],
    background: b.background ?? false,
    completed_at: null as number | null,
    error: null as ResponseOutcome['error'] | null,
    incomplete_details: null as { reason: string } | null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model: r.lane,
    output: [] as unknown[],
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    ...(b.conversation !== undefined
      ? { conversation: { id: typeof b.conversation === 'object' ? b.conversation.id : b.conversation } }
      : {}),
    reasoning: { effort: b.reasoning?.effort ?? null, summary: b.reasoning?.summary ?? null },
    service_tier: 'default',
    store: b.store ?? true,
    temperature: b.temperature ?? 1,
    text: { format: b.text?.format ?? { type: 'text' }, verbosity: b.text?.verbosity ?? 'medium' },
    tool_choice: b.tool_choice ?? 'auto',
    tools: (b.tools ?? []).map((t) =>
      t.type === 'file_search'
        ? {
            type: 'file_search' as const,
            vector_store_ids: t.vector_store_ids,
            max_num_results: t.max_num_results ?? FILE_SEARCH_RESULTS,
            ranking_options: { ranker: 'auto', score_threshold: 0, ...t.ranking_options },
            filters: t.filters ?? null,
          }
        : isBuiltin(t)
          ? {
              type: t.type,
              filters: t.filters ?? null,
              search_context_size: t.search_context_size ?? 'medium',
              user_location: t.user_location ?? null,
            }
          : t.type === 'mcp'
            ? {
                // The server's headers and token are not echoed (nor kept with a stored response).
                type: 'mcp' as const,
                server_label: t.server_label,
                server_url: t.server_url ?? null,
                ...(t.server_description != null ? { server_description: t.server_description } : {}),
                headers: null,
                allowed_tools: t.allowed_tools ?? null,
                require_approval: t.require_approval ?? 'always',
              }
            : t.type === 'shell'
              ? { type: 'shell' as const, environment: t.environment ?? null }
              : t.type === 'apply_patch' || t.type === 'local_shell' || t.type === 'computer'
                ? { type: t.type }
                : t.type === 'computer_use_preview'
                  ? { ...t }
                  : t.type === 'image_generation'
                    ? imageToolEcho(t)
                    : t.type === 'custom'
                      ? {
                          type: 'custom' as const,
                          name: t.name,
                          ...(t.description != null ? { description: t.description } : {}),
                          ...(t.format != null ? { format: t.format } : {}),
                        }
                      : {
                          type: 'function' as const,
                          name: t.name,
                          description: t.description ?? null,
                          parameters: t.parameters ?? null,
                          strict: t.strict ?? null,
                        },
    ),
    top_p: b.top_p ?? 1,
    truncation: b.truncation ?? 'disabled',
    ...(b.user !== undefined ? { user: b.user } : {}),
    metadata: b.metadata ?? {},
    meta: r.meta,
  };
}

/** The items a response continues (its previous_response_id chain, oldest first). @throws AppError not_found */
async function history(ctx: AppContext, tenantId: string, previousId: string | undefined): Promise<StoredItem[]> {
  if (previousId === undefined) return [];
  const limit = ctx.deps.config.chatBodyLimit;
  const chain = await responseChain(ctx.deps.db, tenantId, previousId, limit);
  if (chain === 'tooLarge')
    throw new AppError(
      'payload_too_large',
      `previous_response_id: the conversation it continues holds more than ${limit} bytes (SVC_CHAT_BODY_LIMIT, what one request may send); start a new one, or send the turns that matter.`,
      { details: [{ path: 'body.previous_response_id', message: 'conversation too large' }] },
    );
  if (!chain)
    throw new AppError(
      'not_found',
      `previous_response_id: no stored response '${previousId}' (it is unknown, deleted, expired, or was made with store: false).`,
      { details: [{ path: 'body.previous_response_id', message: 'not found' }] },
    );
  return chain.flatMap((t) => [...(t.input_items as StoredItem[]), ...outputAsInput(t.output as OutputItem[])]);
}

/**
 * A Responses request made ready to answer: the conversation it continues read, its files read, its persona call
 * planned (`detached`: answered later by a worker), and its Response object before the outcome.
 * @throws AppError as history, readInputFiles and preparePersonaCall
 */
export async function prepareResponse(
  ctx: AppContext,
  body: CreateResponseRequest,
  headers: ChatHeaders,
  detached: boolean,
  o: { search?: boolean } = {},
) {
  const tenantId = principalOf(ctx).tenantId;
  const conversationId = conversationOf(body);
  const earlier =
    conversationId !== undefined
      ? await conversationHistory(ctx, tenantId, conversationId)
      : await history(ctx, tenantId, body.previous_response_id);
  const input = normalizeInput(body.input);
  await readInputFiles(input, ctx.deps.config, tenantFiles(ctx.deps.db, tenantId));
  const all = [...earlier, ...input.items];
  const summaries = await compactionSummaries(ctx.deps.db, tenantId, all, (k) =>
    k >= earlier.length
      ? `body.input.${input.origin[k - earlier.length]}.encrypted_content`
      : conversationId !== undefined
        ? 'body.conversation'
        : 'body.previous_response_id',
  );
  // An unknown lane is refused before any MCP server is reached.
  if (body.tools?.some((t) => t.type === 'mcp')) checkedLane(modelsFor(ctx), body.model ?? DEFAULT_LANE);
  const approvals = mcpApprovals(body, input, all);
  const mcp = await ServerTools.open(ctx, body, all, detached);
  try {
    const { messages, source } = itemsToMessages(all, body.instructions, summaries);
    // An image's error names where the client put it: this request's input, or a response it continues.
    const imagePath = (k: number, j: number) => {
      const at = source[k] - earlier.length;
      if (at < 0) return 'body.previous_response_id';
      // A computer call's screenshot is read as a message of its own (see itemsToMessages).
      const item = input.items[at];
      if (item.type === 'computer_call_output')
        return `body.input.${input.origin[at]}.output.${screenshotFromFile(item.output) ? 'file_id' : 'image_url'}`;
      return `body.input.${input.origin[at]}.content.${j}.image_url`;
    };
    const call = await preparePersonaCall(ctx, { ...chatFields(body, mcp), messages }, headers, imagePath, detached);
    // Built-in tools (file_search, web_search) search before the lane answers: their results go before the lane, their
    // items first in the output.
    const builtins =
      o.search === false
        ? undefined
        : await runBuiltins(ctx, { tenantId, body, messages, req: call.req, signal: call.abort.signal });
    const id = `resp_${randomToken(24)}`;
    const base = responseBase(body, {
      id,
      createdAt: Math.floor(Date.now() / 1000),
      lane: call.lane,
      meta: { ...call.meta(''), provider: null },
    });
    return { tenantId, input, call, id, base, custom: callKinds(body), conversationId, builtins, mcp, approvals };
  } catch (err) {
    await mcp?.close();
    throw err;
  }
}

/**
 * What POST /v1/responses/compact compacts: the stored responses it continues, then its input (files read), with the
 * summaries of the compaction items among them. @throws AppError as history, readInputFiles, compactionSummaries
 */
async function compactedConversation(ctx: AppContext, body: CompactRequest) {
  const tenantId = principalOf(ctx).tenantId;
  const earlier = await history(ctx, tenantId, body.previous_response_id);
  const input = body.input !== undefined ? normalizeInput(body.input) : { items: [], origin: [] };
  await readInputFiles(input, ctx.deps.config, tenantFiles(ctx.deps.db, tenantId));
  const items = [...earlier, ...input.items];
  const summaries = await compactionSummaries(ctx.deps.db, tenantId, items, (k) =>
    k >= earlier.length
      ? `body.input.${input.origin[k - earlier.length]}.encrypted_content`
      : 'body.previous_response_id',
  );
  return { items, summaries };
}

/** The conversation a request names (`conversation`, an id or `{ id }`). */
const conversationOf = (b: CreateResponseRequest) =>
  typeof b.conversation === 'object' ? b.conversation.id : b.conversation;

/** The items of the conversation a response is made in, oldest first. @throws AppError not_found, payload_too_large */
async function conversationHistory(ctx: AppContext, tenantId: string, id: string): Promise<StoredItem[]> {
  const limit = ctx.deps.config.chatBodyLimit;
  const items = await conversationContext(ctx.deps.db, tenantId, id, limit);
  if (items === 'tooLarge')
    throw new AppError(
      'payload_too_large',
      `conversation: its items hold more than ${limit} bytes (SVC_CHAT_BODY_LIMIT, what one request may send); delete items it no longer needs, or start a new one.`,
      { details: [{ path: 'body.conversation', message: 'conversation too large' }] },
    );
  if (!items)
    throw new AppError('not_found', `conversation: no conversation '${id}' (unknown or deleted).`, {
      details: [{ path: 'body.conversation', message: 'not found' }],
    });
  return items as StoredItem[];
}

async function createResponse(ctx: AppContext, body: CreateResponseRequest, headers: ChatHeaders) {
  const prepared = await prepareResponse(ctx, body, headers, body.background === true);
  if (!prepared.mcp) return answerResponse(ctx, body, prepared);
  const mcp = prepared.mcp;
  try {
    // The calls the client approved are made first: the lane reads their results after the conversation.
    const approved = await mcp.approved(prepared.approvals);
    prepared.call.req.messages.push(...approved.messages);
    mcp.items.push(...approved.items);
    // Approved calls count against max_tool_calls: with none left, the model may call none.
    if (!mcp.open && prepared.call.req.tools) prepared.call.req.tool_choice = 'none';
    const answer = await answerResponse(ctx, body, prepared);
    // A stream that started owns the sessions until it ends (it closes them); a JSON answer is done with them.
    if (!body.stream || body.background) await mcp.close();
    return answer;
  } catch (err) {
    await mcp.close();
    throw err;
  }
}

/** Answers a prepared response: queued in the background, streamed, or as JSON. */
async function answerResponse(
  ctx: AppContext,
  body: CreateResponseRequest,
  prepared: Awaited<ReturnType<typeof prepareResponse>>,
) {
  const { tenantId, input, call, id, base, custom, conversationId, builtins, mcp } = prepared;
  const { models, req, abort, toolsOffered, tap } = call;
  if (body.background) {
    const queued = await queueBackgroundResponse(ctx, {
      tenantId,
      id,
      previousId: body.previous_response_id,
      inputItems: input.items,
      base,
      call,
      custom,
      conversationId,
      builtins,
      serverTools: mcp ? await mcp.toJob(ctx.deps.db, tenantId, id) : undefined,
    });
    if (!body.stream) return queued;
    await streamBackgroundResponse(ctx, { tenantId, id, response: queued });
    return undefined;
  }
  const keep = async (response: { output: unknown[] }) => {
    // A conversation gets the turn whatever `store` says (its items are what the next response reads).
    if (conversationId !== undefined)
      await addConversationItems(ctx.deps.db, tenantId, conversationId, [
        ...input.items,
        ...outputAsInput(response.output as OutputItem[]),
      ]);
    if (body.store === false) return;
    await saveResponse(ctx.deps.db, {
      tenantId,
      id,
      previousId: body.previous_response_id,
      inputItems: input.items,
      response,
    });
  };
  const snapshot: ResponseSnapshot = (s) => withOutcome(base, s);
  const lead = withServerLead(builtinLead(builtins), mcp);

  if (body.stream) {
    const stream = models.stream(req);
    await unlessClientGone(abort, () =>
      sendResponseStream(ctx, {
        stream,
        abort,
        toolsOffered,
        custom,
        tap,
        snapshot,
        lead,
        mcp: mcp ? { session: mcp, req, stream: (r) => models.stream(r) } : undefined,
        onEnd: mcp ? () => mcp.close() : undefined,
        onComplete: async (r) => {
          await call.store(r.content, r.provider, r.calls);
          await keep(r.response);
        },
      }),
    );
    return undefined;
  }
  const answer = await unlessClientGone(abort, () =>
    completeResponse((r) => models.complete(r), req, { server: mcp, custom, toolsOffered, lead }),
  ).catch((err: unknown) => {
    tap?.end();
    throw err;
  });
  const { last: result, output } = answer;
  tap?.push(answer.content);
  try {
    const status = responseStatus(result.finish_reason);
    const response = snapshot({
      status,
      output,
      usage: answer.usage,
      finish: result.finish_reason,
      provider: result.provider,
    });
    await call.store(answer.content, result.provider, answer.clientCalls);
    await keep(response);
    return response;
  } finally {
    // The socket's subscribers hear the end once the session and the stored response hold the answer.
    tap?.end();
  }
}

const IdParams = z.object({ id: ResponseId });
const unknownResponse = () => notFound('Response');

/** OpenAI's Responses API over the persona lanes: create (JSON or SSE), retrieve, delete, input items. */
export function responseRoutes(): RouteSpec[] {
  return [
    ...compactionRoutes(compactedConversation),
    defineRoute({
      method: 'post',
      path: '/v1/responses/input_tokens',
      access: CHAT,
      summary:
        'The input tokens a response with this body would send (persona, history, input, images, tools), counted with OpenAI’s o200k tokenizer; no model call.',
      tags: ['responses'],
      metered: 'admission',
      conversation: true,
      body: CreateResponseRequest,
      headers: ChatHeaders,
      readHeaders: readChatHeaders,
      response: InputTokenCount,
      responses: { 404: 'Unknown model, previous_response_id or conversation.' },
      example: { model: 'svc-oracle', input: 'How many tokens is this?' },
      handler: async (ctx: AppContext, { body, headers }) => {
        // Built-in tools do not search for a count: their results are found when a response runs (OpenAI's count
        // has them neither), and a count must not query engines.
        const { call, mcp } = await prepareResponse(ctx, body, headers, true, { search: false });
        await mcp?.close();
        return { object: 'response.input_tokens' as const, input_tokens: await countInputTokens(call.req) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/responses',
      access: CHAT,
      summary:
        "OpenAI's Responses API through the persona, surface, profile and skills: messages, images, function tools, structured output, stored responses chained by previous_response_id; SSE when stream is true.",
      tags: ['chat'],
      metered: true,
      conversation: true,
      body: CreateResponseRequest,
      headers: ChatHeaders,
      readHeaders: readChatHeaders,
      response: ResponseObject,
      produces: ['application/json', 'text/event-stream'],
      responses: {
        404: 'Unknown model (model_not_found), or an unknown previous_response_id.',
        429: 'The upstream provider is rate limiting (Retry-After).',
        502: 'The upstream provider failed.',
        503: 'No model provider is configured.',
        504: 'The upstream provider timed out.',
      },
      example: { model: 'svc-oracle', input: 'Hello', instructions: 'Answer in one sentence.' },
      handler: (ctx: AppContext, { body, headers }) => createResponse(ctx, body, headers),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/responses/:id',
      access: CHAT,
      summary:
        "A stored response of this tenant (kept 30 days): as it was answered, or a background one as it stands; with stream=true a background response's events (after starting_after, or Last-Event-ID), live until it ends.",
      tags: ['chat'],
      params: IdParams,
      query: RetrieveResponseQuery,
      headers: ResumeHeaders,
      response: ResponseObject,
      produces: ['application/json', 'text/event-stream'],
      handler: async (ctx: AppContext, { params, query, headers }) => {
        const tenantId = principalOf(ctx).tenantId;
        const response = await getResponse(ctx.deps.db, tenantId, params.id);
        if (!response) throw unknownResponse();
        if (!query.stream) return response;
        await streamBackgroundResponse(ctx, {
          tenantId,
          id: params.id,
          response: response as Record<string, unknown>,
          startingAfter: query.starting_after,
          lastEventId: lastEventIdOf(ctx, headers['last-event-id']),
        });
        return undefined;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/responses/:id',
      access: CHAT,
      summary:
        'Deletes a stored response (a response continuing it then starts from the one before); a background one still running is cancelled first.',
      tags: ['chat'],
      params: IdParams,
      response: DeletedResponse,
      handler: async (ctx: AppContext, { params }) => {
        const tenantId = principalOf(ctx).tenantId;
        const row = await getResponseRow(ctx.deps.db, tenantId, params.id);
        if (row?.job) await cancelBackgroundResponse(ctx, tenantId, params.id, row);
        if (!(await deleteResponse(ctx.deps.db, tenantId, params.id))) throw unknownResponse();
        return { id: params.id, object: 'response' as const, deleted: true as const };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/responses/:id/input_items',
      access: CHAT,
      summary: "A stored response's own input items, newest first by default (order, after, limit as OpenAI's).",
      tags: ['chat'],
      params: IdParams,
      query: InputItemsQuery,
      response: InputItemList,
      handler: async (ctx: AppContext, { params, query }) => {
        const items = (await getInputItems(ctx.deps.db, principalOf(ctx).tenantId, params.id)) as StoredItem[] | null;
        if (!items) throw unknownResponse();
        const ordered = query.order === 'desc' ? [...items].reverse() : items;
        let from = 0;
        if (query.after !== undefined) {
          from = ordered.findIndex((i) => i.id === query.after) + 1;
          if (from === 0) throw unknownCursor(query.after, 'item', "among this response's input items");
        }
        return cursorPage(ordered.slice(from, from + query.limit + 1), query.limit, (i) => i);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/responses/:id/cancel',
      access: CHAT,
      summary:
        'Cancels a background response (queued or in progress: it ends as cancelled); one that has ended is answered as it is. A response answered in its request cannot be cancelled (400).',
      tags: ['chat'],
      params: IdParams,
      response: ResponseObject,
      handler: async (ctx: AppContext, { params }) =>
        (await cancelBackgroundResponse(ctx, principalOf(ctx).tenantId, params.id)) ??
        Promise.reject(unknownResponse()),
    }),
  ];
}
