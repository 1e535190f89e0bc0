import { z } from 'zod';
import type { BatchJob } from '../../activities/batches';
import {
  deleteBatch,
  getBatch,
  insertBatch,
  listBatches,
  markCancelling,
  type BatchRequestIn,
  type BatchRow,
} from '../../activities/store/batches';
import { getFileContent } from '../../activities/store/files';
import { randomToken } from '../../activities/store/ids';
import { BatchId, BatchLine, BatchList, BatchObject, CreateBatchRequest, ListBatchesQuery } from '../../schema/batches';
import { ChatCompletionRequest } from '../../schema/chat';
import { CreateEmbeddingRequest } from '../../schema/embeddings';
import { AppError, notFound, zodDetails } from '../../schema/errors';
import { tooDeep, unstorablePaths } from '../../schema/storable';
import type { ChatHeaders } from '../../schema/headers';
import { principalOf, type AppContext } from '../context';
import { cursorPage, unknownCursor } from '../list-page';
import { admittedWindows } from '../middleware/meter';
import { defineRoute, type RouteSpec } from '../route';
import { startWithInput } from '../start-workflow';
import { cancelStoredJob } from '../workflow-clients/cancel';
import { preparePersonaCall } from './chat-persona';
import { emitWebhookEventFromApi } from './webhooks';
import { checkedLane, completionId, modelsFor } from './chat-shared';
import { prepareResponse } from './responses';
import { CreateResponseRequest } from '../../schema/responses';
import { embeddingModel } from './embeddings';
import { moderationModel } from './moderations';
import { CreateModerationRequest } from '../../schema/moderations';
import { CreateCompletionRequest } from '../../schema/completions';

const access = { scope: 'runtime:chat' } as const;
const tags = ['batches'];
const IdParams = z.object({ id: BatchId });
/** Validation errors a failed batch reports at most (OpenAI reports a list too). */
const MAX_ERRORS = 100;

type BatchError = { code: string; message: string; param: string | null; line: number | null };

/** OpenAI's Batch object of a stored batch (fields without a value left out, as OpenAI's are). */
export function batchObject(b: BatchRow) {
  const at = (k: keyof BatchRow) => (b[k] !== null ? { [k]: b[k] as number } : {});
  return {
    id: b.id,
    object: 'batch' as const,
    endpoint: b.endpoint,
    ...(b.errors ? { errors: { object: 'list' as const, data: b.errors } } : {}),
    input_file_id: b.input_file_id,
    completion_window: b.completion_window,
    status: b.status as z.output<typeof BatchObject>['status'],
    ...(b.output_file_id ? { output_file_id: b.output_file_id } : {}),
    ...(b.error_file_id ? { error_file_id: b.error_file_id } : {}),
    created_at: b.created_at,
    ...at('in_progress_at'),
    expires_at: b.expires_at,
    ...at('finalizing_at'),
    ...at('completed_at'),
    ...at('failed_at'),
    ...at('cancelling_at'),
    ...at('cancelled_at'),
    ...at('expired_at'),
    request_counts: { total: b.request_total, completed: b.request_completed, failed: b.request_failed },
    usage: {
      input_tokens: b.tokens_in,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: b.tokens_out,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: b.tokens_in + b.tokens_out,
    },
    metadata: b.metadata,
  };
}

/** The first place an AppError names, as a batch error's param. */
const paramOf = (err: AppError) => err.details?.[0]?.path ?? null;

/**
 * A batch's input lines checked and planned: each line's request as its endpoint's route would take it (the persona
 * planned for chat), or the errors that fail the batch (line numbers from 1).
 */
async function planLines(
  ctx: AppContext,
  body: CreateBatchRequest,
  text: string,
): Promise<{ requests: BatchRequestIn[]; errors: BatchError[] }> {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
  const errors: BatchError[] = [];
  const requests: BatchRequestIn[] = [];
  const seen = new Set<string>();
  const fail = (line: number, code: string, message: string, param: string | null = null) => {
    if (errors.length < MAX_ERRORS) errors.push({ code, message, param, line });
  };
  const headers: ChatHeaders = { 'x-svc-skill': [] } as ChatHeaders;
  for (const [i, raw] of lines.entries()) {
    const n = i + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      fail(n, 'invalid_json_line', 'This line is not valid JSON.');
      continue;
    }
    const line = BatchLine.safeParse(parsed);
    if (!line.success) {
      const d = zodDetails(line.error.issues, '')[0];
      fail(n, 'invalid_request', d?.message ?? 'not a batch request line', d?.path.replace(/^\./, '') || null);
      continue;
    }
    const { custom_id, url } = line.data;
    if (url !== body.endpoint) {
      fail(n, 'mismatched_url', `The line's url is ${url}; this batch's endpoint is ${body.endpoint}.`, 'url');
      continue;
    }
    if (seen.has(custom_id)) {
      fail(n, 'duplicate_custom_id', `custom_id '${custom_id}' is used by an earlier line.`, 'custom_id');
      continue;
    }
    seen.add(custom_id);
    try {
      const job = await planLine(ctx, body.endpoint, line.data.body, headers);
      requests.push({ line: n, customId: custom_id, job });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      fail(n, err.code, err.message, paramOf(err));
    }
  }
  if (!lines.length)
    errors.push({ code: 'empty_file', message: 'The input file holds no requests.', param: null, line: null });
  return { requests, errors };
}

/** One line's request planned for the worker. @throws AppError naming what is wrong with it */
async function planLine(
  ctx: AppContext,
  endpoint: string,
  raw: Record<string, unknown>,
  headers: ChatHeaders,
): Promise<BatchJob> {
  // As the routes refuse them before their schema: bodies nested too deep, strings PostgreSQL cannot store.
  const deep = tooDeep(raw, 'body');
  const unstorable = deep ? [deep] : unstorablePaths(raw, 'body');
  if (unstorable.length)
    throw new AppError('invalid_request', `${unstorable[0].path}: ${unstorable[0].message}`, { details: unstorable });
  if (endpoint === '/v1/embeddings') {
    const body = CreateEmbeddingRequest.safeParse(raw);
    if (!body.success) throw invalidBody(body.error.issues);
    embeddingModel(ctx.deps.config, body.data);
    return { kind: 'embeddings', body: body.data };
  }
  if (endpoint === '/v1/moderations') {
    const body = CreateModerationRequest.safeParse(raw);
    if (!body.success) throw invalidBody(body.error.issues);
    moderationModel(ctx.deps.config, body.data);
    return { kind: 'moderations', body: body.data };
  }
  if (endpoint === '/v1/completions') {
    const body = CreateCompletionRequest.safeParse(raw);
    if (!body.success) throw invalidBody(body.error.issues);
    if (body.data.stream)
      throw new AppError('invalid_request', 'stream cannot be true in a batch.', {
        details: [{ path: 'body.stream', message: 'must be false or absent' }],
      });
    checkedLane(modelsFor(ctx), body.data.model);
    return { kind: 'completions', body: body.data };
  }
  if (endpoint === '/v1/responses') {
    const body = CreateResponseRequest.safeParse(raw);
    if (!body.success) throw invalidBody(body.error.issues);
    if (body.data.conversation !== undefined)
      throw new AppError('invalid_request', 'conversation cannot be used in a batch: use previous_response_id.', {
        details: [{ path: 'body.conversation', message: 'not in a batch' }],
      });
    for (const field of ['stream', 'background'] as const)
      if (body.data[field])
        throw new AppError('invalid_request', `${field} cannot be true in a batch.`, {
          details: [{ path: `body.${field}`, message: 'must be false or absent' }],
        });
    const mcpAt = body.data.tools?.findIndex((t) => t.type === 'mcp') ?? -1;
    if (mcpAt >= 0)
      throw new AppError(
        'invalid_request',
        'mcp tools cannot be used in a batch (a batch line cannot stop for approvals): send the line to POST /v1/responses.',
        { details: [{ path: `body.tools.${mcpAt}`, message: 'not in a batch' }] },
      );
    const r = await prepareResponse(ctx, body.data, headers, true);
    // Its image_generation tool (the one server-run tool a line may have) is run again by the batch's worker.
    const serverTools = await r.mcp?.toJob(ctx.deps.db, r.tenantId, r.id);
    await r.mcp?.close();
    const { signal: _signal, ...req } = r.call.req;
    return {
      kind: 'responses',
      req,
      toolsOffered: r.call.toolsOffered,
      custom: [...r.custom],
      base: r.base,
      store:
        body.data.store === false ? null : { inputItems: r.input.items, previousId: body.data.previous_response_id },
      ...(r.builtins ? { builtins: r.builtins } : {}),
      ...(serverTools ? { serverTools } : {}),
    };
  }
  const body = ChatCompletionRequest.safeParse(raw);
  if (!body.success) throw invalidBody(body.error.issues);
  if (body.data.stream)
    throw new AppError('invalid_request', 'stream cannot be true in a batch.', {
      details: [{ path: 'body.stream', message: 'must be false or absent' }],
    });
  if ((body.data.n ?? 1) !== 1)
    throw new AppError('invalid_request', 'n must be 1 in a batch (send a line per choice).', {
      details: [{ path: 'body.n', message: 'must be 1' }],
    });
  const call = await preparePersonaCall(ctx, body.data, headers, undefined, true);
  const { signal: _signal, ...req } = call.req;
  return {
    kind: 'chat',
    req,
    toolsOffered: call.toolsOffered,
    meta: call.meta(''),
    // Stored as the route stores it (store: true), under the id planned here: a request answered again replaces it.
    store: body.data.store
      ? { id: completionId(), messages: body.data.messages, metadata: body.data.metadata ?? {} }
      : undefined,
  };
}

const invalidBody = (issues: Parameters<typeof zodDetails>[0]) => {
  const details = zodDetails(issues, 'body');
  return new AppError('invalid_request', `${details[0]?.path}: ${details[0]?.message}`, { details });
};

async function createBatch(ctx: AppContext, body: CreateBatchRequest) {
  const p = principalOf(ctx);
  const { db, config } = ctx.deps;
  const file = await getFileContent(db, p.tenantId, body.input_file_id);
  if (!file)
    throw new AppError('not_found', `No file '${body.input_file_id}' among your files.`, {
      details: [{ path: 'body.input_file_id', message: 'unknown file' }],
    });
  if (file.purpose !== 'batch')
    throw new AppError(
      'invalid_request',
      `input_file_id: the file was uploaded with purpose ${file.purpose}; upload a batch's input with purpose batch.`,
      { details: [{ path: 'body.input_file_id', message: 'purpose is not batch' }] },
    );
  const text = new TextDecoder('utf-8', { fatal: false }).decode(file.bytes);
  const count = text.split('\n').filter((l) => l.trim()).length;
  if (count > config.batch.maxRequests)
    throw new AppError(
      'invalid_request',
      `input_file_id: the file holds ${count} requests; a batch takes at most ${config.batch.maxRequests} (SVC_BATCH_MAX_REQUESTS).`,
      { details: [{ path: 'body.input_file_id', message: 'too many requests' }] },
    );
  const { requests, errors } = await planLines(ctx, body, text);
  const id = `batch_${randomToken(24)}`;
  const row = await insertBatch(db, {
    id,
    tenantId: p.tenantId,
    keyId: p.keyId,
    endpoint: body.endpoint,
    inputFileId: body.input_file_id,
    completionWindow: body.completion_window,
    windowSeconds: config.batch.windowSeconds,
    metadata: body.metadata,
    outputExpiresSeconds: body.output_expires_after?.seconds,
    windows: admittedWindows(ctx),
    ...(errors.length ? { errors, requests: [] } : { requests }),
    maxRunning: config.batch.maxRunning,
  });
  if ('running' in row)
    throw new AppError(
      'rate_limited',
      `${row.running} of your batches are running, the most at once (SVC_BATCH_MAX_RUNNING); create this one when one has ended.`,
      { headers: { 'Retry-After': '60' } },
    );
  if (errors.length) {
    // A batch refused at creation has no workflow to say it ended: its batch.failed event starts here.
    await emitWebhookEventFromApi(ctx, p.tenantId, 'batch.failed', row.id);
    return batchObject(row);
  }
  await startWithInput(
    ctx,
    'batchWorkflow',
    { tenantId: p.tenantId, batchId: id, expiresAtMs: row.expires_at * 1000 },
    {
      workflowId: id,
      kind: 'batch',
      title: `Batch of ${requests.length} ${body.endpoint} requests`,
      onStartFailed: () => deleteBatch(db, p.tenantId, id),
    },
  );
  return batchObject(row);
}

/** OpenAI's Batch API: a JSONL file of responses, chat or embeddings requests answered by a durable workflow. */
export function batchRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/batches',
      access,
      tags,
      summary:
        "Create a batch (OpenAI's Batch API): every line of a JSONL file (purpose batch) is checked and planned now, then answered by a durable workflow (batch_...); results in output and error files.",
      // Limits and budgets admit the batch (429 when one is spent); its requests' usage is recorded as they run.
      metered: 'admission',
      body: CreateBatchRequest,
      response: BatchObject,
      responses: { 404: 'Unknown input_file_id.', 429: 'A rate limit or token budget of the key or tenant is spent.' },
      handler: (ctx: AppContext, { body }) => createBatch(ctx, body),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/batches',
      access,
      tags,
      summary: "The tenant's batches, newest first (limit, after).",
      query: ListBatchesQuery,
      response: BatchList,
      handler: async (ctx: AppContext, { query }) => {
        const rows = await listBatches(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...query });
        if (!rows) throw unknownCursor(query.after!, 'batch', 'among your batches');
        return cursorPage(rows, query.limit, batchObject);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/batches/:id',
      access,
      tags,
      summary: 'A batch of the tenant: status, request counts, usage, and its output and error files once it ends.',
      params: IdParams,
      response: BatchObject,
      handler: async (ctx: AppContext, { params }) => {
        const b = await getBatch(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!b) throw notFound('Batch');
        return batchObject(b);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/batches/:id/cancel',
      access,
      tags,
      summary:
        'Cancels a running batch: cancelling at once, then cancelled with what was answered in its files; a batch that has ended is answered as it is.',
      params: IdParams,
      response: BatchObject,
      handler: async (ctx: AppContext, { params }) => {
        const tenantId = principalOf(ctx).tenantId;
        const marked = await markCancelling(ctx.deps.db, tenantId, params.id);
        if (marked) {
          await cancelStoredJob(ctx, params.id, 'batch');
          return batchObject(marked);
        }
        const b = await getBatch(ctx.deps.db, tenantId, params.id);
        if (!b) throw notFound('Batch');
        return batchObject(b);
      },
    }),
  ];
}
