import { z } from 'zod';
import { resultsPage, searchableStores, searchVectorStores } from '../../activities/vector-stores/search';
import {
  addVectorStoreFiles,
  cancelFileBatch,
  createVectorStore,
  deleteVectorStore,
  deleteVectorStoreFile,
  failIndexing,
  getFileBatch,
  getVectorStore,
  getVectorStoreFile,
  listVectorStoreFiles,
  listVectorStores,
  updateVectorStore,
  updateVectorStoreFileAttributes,
  vectorStoreFileContent,
  type FileBatchRow,
  type FileChunking,
  type FileToAdd,
  type VectorStoreFileRow,
  type VectorStoreRow,
} from '../../activities/store/vector-stores';
import { AppError, notFound } from '../../schema/errors';
import { FileId } from '../../schema/files';
import {
  AUTO_CHUNKING,
  CreateFileBatchRequest,
  CreateVectorStoreFileRequest,
  CreateVectorStoreRequest,
  DeletedVectorStore,
  DeletedVectorStoreFile,
  FileBatchId,
  FileBatchObject,
  ListVectorStoreFilesQuery,
  ListVectorStoresQuery,
  SearchRequest,
  SearchResultsPage,
  UpdateAttributesRequest,
  UpdateVectorStoreRequest,
  VectorStoreFileContent,
  VectorStoreFileList,
  VectorStoreFileObject,
  VectorStoreId,
  VectorStoreList,
  VectorStoreObject,
  type ChunkingStrategy,
} from '../../schema/vector-stores';
import { principalOf, type AppContext } from '../context';
import { cursorPage, unknownCursor } from '../list-page';
import { defineRoute, type RouteSpec } from '../route';
import { startWithInput } from '../start-workflow';
import { cancelStoredJob } from '../workflow-clients/cancel';
import { abortOnDisconnect, unlessClientGone } from './chat-shared';

const access = { scope: 'runtime:chat' } as const;
const tags = ['vector stores'];
const StoreParams = z.object({ id: VectorStoreId });
const FileParams = z.object({ id: VectorStoreId, file_id: FileId });
const BatchParams = z.object({ id: VectorStoreId, batch_id: FileBatchId });
const unknownStore = () => notFound('Vector store');
const unknownFile = () => notFound('Vector store file');

/** OpenAI's VectorStore object of a stored one. */
export function vectorStoreObject(v: VectorStoreRow): z.output<typeof VectorStoreObject> {
  const expiresAt = v.expires_days !== null ? v.last_active_at + v.expires_days * 86_400 : null;
  return {
    id: v.id,
    object: 'vector_store',
    created_at: v.created_at,
    name: v.name,
    description: v.description,
    usage_bytes: v.usage_bytes,
    file_counts: v.file_counts,
    status: v.expired ? 'expired' : v.file_counts.in_progress > 0 ? 'in_progress' : 'completed',
    ...(v.expires_days !== null ? { expires_after: { anchor: 'last_active_at' as const, days: v.expires_days } } : {}),
    expires_at: expiresAt,
    last_active_at: v.last_active_at,
    metadata: v.metadata,
  };
}

/** OpenAI's VectorStoreFile object. */
function fileObject(f: VectorStoreFileRow): z.output<typeof VectorStoreFileObject> {
  return {
    id: f.id,
    object: 'vector_store.file',
    usage_bytes: f.usage_bytes,
    created_at: f.created_at,
    vector_store_id: f.vector_store_id,
    status: f.status,
    last_error: f.last_error,
    chunking_strategy: {
      type: 'static',
      static: { max_chunk_size_tokens: f.max_chunk_tokens, chunk_overlap_tokens: f.overlap_tokens },
    },
    attributes: f.attributes,
  };
}

/** OpenAI's file batch object: cancelled once cancelled; else in progress while a file is, failed when all failed. */
function batchObject(b: FileBatchRow): z.output<typeof FileBatchObject> {
  const c = b.file_counts;
  return {
    id: b.id,
    object: 'vector_store.files_batch',
    created_at: b.created_at,
    vector_store_id: b.vector_store_id,
    status: b.cancelled
      ? 'cancelled'
      : c.in_progress > 0
        ? 'in_progress'
        : c.total > 0 && c.failed === c.total
          ? 'failed'
          : 'completed',
    file_counts: c,
  };
}

/** A chunking strategy as stored (`auto`: 800 tokens overlapping by 400). */
function chunkingOf(s: ChunkingStrategy | undefined): FileChunking {
  if (s?.type === 'static')
    return { type: 'static', maxTokens: s.static.max_chunk_size_tokens, overlapTokens: s.static.chunk_overlap_tokens };
  return {
    type: 'auto',
    maxTokens: AUTO_CHUNKING.max_chunk_size_tokens,
    overlapTokens: AUTO_CHUNKING.chunk_overlap_tokens,
  };
}

/** A page of a store's files (or a batch's), OpenAI's cursor list. @throws AppError invalid_request (unknown `after`) */
async function filesPage(
  ctx: AppContext,
  o: Omit<Parameters<typeof listVectorStoreFiles>[1], 'tenantId'>,
  among: string,
) {
  const rows = await listVectorStoreFiles(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...o });
  if (!rows) throw unknownCursor(o.after!, 'file', among);
  return cursorPage(rows, o.limit, fileObject);
}

/** A store of the tenant, or 404. */
async function storeOf(ctx: AppContext, id: string): Promise<VectorStoreRow> {
  const v = await getVectorStore(ctx.deps.db, principalOf(ctx).tenantId, id);
  if (!v) throw unknownStore();
  return v;
}

/**
 * Adds files to a store and starts the workflow that reads them (`vsfiles-<generation>`, or the batch's id). A file
 * id that is not one of the tenant's live files is 404 naming it, and nothing is added; when the workflow cannot be
 * started, the files are marked failed (server_error) and the request is 503.
 * @returns the rows added and the batch's id (when `batch`)
 */
async function addFiles(
  ctx: AppContext,
  storeId: string,
  files: FileToAdd[],
  batch: boolean,
  path: string,
): Promise<{ rows: readonly VectorStoreFileRow[]; batchId: string | null }> {
  const tenantId = principalOf(ctx).tenantId;
  const limit = ctx.deps.config.vectorStoresTenantLimit;
  const added = await addVectorStoreFiles(ctx.deps.db, { tenantId, storeId, files, batch, tenantLimit: limit });
  if (!added) throw unknownStore();
  if ('over' in added)
    throw new AppError(
      'payload_too_large',
      `Your vector stores hold ${added.over} bytes, the most they may (SVC_VECTOR_STORES_TENANT_LIMIT, ${limit}): remove files from stores, or delete stores you no longer need.`,
    );
  if ('missing' in added)
    throw new AppError(
      'not_found',
      `${path}: no file ${added.missing.map((m) => `'${m}'`).join(', ')} among your files (unknown, deleted or expired; upload with POST /v1/files).`,
      { details: added.missing.map((m) => ({ path, message: `unknown file ${m}` })) },
    );
  const { generation, batchId } = added;
  await startWithInput(
    ctx,
    'vectorStoreFilesWorkflow',
    { tenantId, storeId, generation, fileIds: added.rows.map((r) => r.id) },
    {
      workflowId: batchId ?? `vsfiles-${generation}`,
      kind: 'vector_store_files',
      title: `${added.rows.length} file(s) into vector store ${storeId}`,
      onStartFailed: () =>
        failIndexing(ctx.deps.db, {
          tenantId,
          storeId,
          generation,
          error: { code: 'server_error', message: 'The file could not be queued for reading; add it again.' },
        }),
    },
  );
  return { rows: added.rows, batchId };
}

/** OpenAI's Vector Stores API: stores of the tenant's files, read by a workflow, searched, and used by file_search. */
export function vectorStoreRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores',
      access,
      tags,
      idempotent: true,
      summary:
        "Create a vector store (OpenAI's Vector Stores API), optionally with files of /v1/files (file_ids), read into it by a durable workflow.",
      body: CreateVectorStoreRequest,
      response: VectorStoreObject,
      responses: {
        404: 'A file_ids entry is not one of your files.',
        413: 'Your vector stores hold SVC_VECTOR_STORES_TENANT_LIMIT already.',
      },
      example: { name: 'Handbook', file_ids: ['file-abc123'] },
      handler: async (ctx: AppContext, { body }) => {
        const { db } = ctx.deps;
        const tenantId = principalOf(ctx).tenantId;
        const id = await createVectorStore(db, {
          tenantId,
          name: body.name ?? '',
          description: body.description,
          metadata: body.metadata ?? {},
          expiresDays: body.expires_after?.days,
        });
        if (body.file_ids?.length) {
          const chunking = chunkingOf(body.chunking_strategy);
          await addFiles(
            ctx,
            id,
            body.file_ids.map((fileId) => ({ fileId, chunking })),
            false,
            'body.file_ids',
          ).catch(async (err: unknown) => {
            // A refused file refuses the request: no store is left behind.
            if (err instanceof AppError && (err.code === 'not_found' || err.code === 'payload_too_large'))
              await deleteVectorStore(db, tenantId, id);
            throw err;
          });
        }
        return vectorStoreObject(await storeOf(ctx, id));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores',
      access,
      tags,
      summary: "The tenant's vector stores, newest first by default (limit 1-100, order, after).",
      query: ListVectorStoresQuery,
      response: VectorStoreList,
      handler: async (ctx: AppContext, { query }) => {
        const rows = await listVectorStores(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...query });
        if (!rows) throw unknownCursor(query.after!, 'vector store', 'among your vector stores');
        return cursorPage(rows, query.limit, vectorStoreObject);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores/:id',
      access,
      tags,
      summary: 'A vector store of the tenant: status, file counts, usage, expiry.',
      params: StoreParams,
      response: VectorStoreObject,
      handler: async (ctx: AppContext, { params }) => vectorStoreObject(await storeOf(ctx, params.id)),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores/:id',
      access,
      tags,
      summary: "Changes a vector store's name, expiry (expires_after; null: never) or metadata (replaced).",
      params: StoreParams,
      body: UpdateVectorStoreRequest,
      response: VectorStoreObject,
      handler: async (ctx: AppContext, { params, body }) => {
        const updated = await updateVectorStore(ctx.deps.db, principalOf(ctx).tenantId, params.id, {
          name: body.name ?? undefined,
          expiresDays: body.expires_after === undefined ? undefined : (body.expires_after?.days ?? null),
          metadata: body.metadata ?? undefined,
        });
        if (!updated) throw unknownStore();
        return vectorStoreObject(await storeOf(ctx, params.id));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/vector_stores/:id',
      access,
      tags,
      summary: 'Deletes a vector store with what it read from its files (the files in /v1/files stay).',
      params: StoreParams,
      response: DeletedVectorStore,
      handler: async (ctx: AppContext, { params }) => {
        if (!(await deleteVectorStore(ctx.deps.db, principalOf(ctx).tenantId, params.id))) throw unknownStore();
        return { id: params.id, object: 'vector_store.deleted' as const, deleted: true as const };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores/:id/search',
      access,
      tags,
      summary:
        "Searches a vector store's completed files (full text, and cosine similarity where the provider embeds), filtered by file attributes; scores 0-1.",
      params: StoreParams,
      body: SearchRequest,
      response: SearchResultsPage,
      responses: { 400: 'The vector store has expired.' },
      example: { query: 'What is the refund policy?', max_num_results: 5 },
      handler: async (ctx: AppContext, { params, body }) => {
        const tenantId = principalOf(ctx).tenantId;
        await searchableStores(ctx.deps.db, tenantId, [params.id], () => 'path.id');
        const queries = typeof body.query === 'string' ? [body.query] : body.query;
        const abort = abortOnDisconnect(ctx);
        const hits = await unlessClientGone(abort, () =>
          searchVectorStores(ctx.deps, {
            tenantId,
            storeIds: [params.id],
            queries,
            limit: body.max_num_results,
            filter: body.filters,
            ranking: body.ranking_options,
            signal: abort.signal,
          }),
        );
        return resultsPage(queries, hits);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores/:id/files',
      access,
      tags,
      idempotent: true,
      summary:
        'Adds a file of /v1/files to a vector store (in_progress until read; a file already there is read again with the new attributes and chunking).',
      params: StoreParams,
      body: CreateVectorStoreFileRequest,
      response: VectorStoreFileObject,
      responses: {
        404: 'Unknown vector store, or file_id is not one of your files.',
        413: 'Your vector stores hold SVC_VECTOR_STORES_TENANT_LIMIT already.',
      },
      example: { file_id: 'file-abc123', attributes: { team: 'support' } },
      handler: async (ctx: AppContext, { params, body }) => {
        const { rows } = await addFiles(
          ctx,
          params.id,
          [{ fileId: body.file_id, attributes: body.attributes, chunking: chunkingOf(body.chunking_strategy) }],
          false,
          'body.file_id',
        );
        return fileObject(rows[0]);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores/:id/files',
      access,
      tags,
      summary: "A vector store's files, newest first by default (filter by status, limit, order, after).",
      params: StoreParams,
      query: ListVectorStoreFilesQuery,
      response: VectorStoreFileList,
      handler: async (ctx: AppContext, { params, query }) => {
        await storeOf(ctx, params.id);
        return filesPage(ctx, { storeId: params.id, ...query }, 'among the files of this vector store');
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores/:id/files/:file_id',
      access,
      tags,
      summary: 'A file of a vector store: status (in_progress, completed, failed with last_error, cancelled), usage.',
      params: FileParams,
      response: VectorStoreFileObject,
      handler: async (ctx: AppContext, { params }) => {
        const f = await getVectorStoreFile(ctx.deps.db, principalOf(ctx).tenantId, params.id, params.file_id);
        if (!f) throw unknownFile();
        if (f.status === 'in_progress') pollAfter(ctx);
        return fileObject(f);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores/:id/files/:file_id',
      access,
      tags,
      summary: "Replaces a vector store file's attributes (null: none); search filters read them at once.",
      params: FileParams,
      body: UpdateAttributesRequest,
      response: VectorStoreFileObject,
      handler: async (ctx: AppContext, { params, body }) => {
        const f = await updateVectorStoreFileAttributes(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          storeId: params.id,
          fileId: params.file_id,
          attributes: body.attributes,
        });
        if (!f) throw unknownFile();
        return fileObject(f);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/vector_stores/:id/files/:file_id',
      access,
      tags,
      summary: 'Removes a file from a vector store with what was read from it (the file in /v1/files stays).',
      params: FileParams,
      response: DeletedVectorStoreFile,
      handler: async (ctx: AppContext, { params }) => {
        const deleted = await deleteVectorStoreFile(ctx.deps.db, principalOf(ctx).tenantId, params.id, params.file_id);
        if (!deleted) throw unknownFile();
        return { id: params.file_id, object: 'vector_store.file.deleted' as const, deleted: true as const };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores/:id/files/:file_id/content',
      access,
      tags,
      summary: "A vector store file's text as it was read (empty until it is).",
      params: FileParams,
      response: VectorStoreFileContent,
      handler: async (ctx: AppContext, { params }) => {
        const text = await vectorStoreFileContent(ctx.deps.db, principalOf(ctx).tenantId, params.id, params.file_id);
        if (text === null) throw unknownFile();
        return {
          object: 'vector_store.file_content.page' as const,
          data: text ? [{ type: 'text' as const, text }] : [],
          has_more: false,
          next_page: null,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores/:id/file_batches',
      access,
      tags,
      idempotent: true,
      summary:
        'Adds up to 2000 files to a vector store at once (file_ids with shared attributes and chunking, or files each with their own), read by one durable workflow.',
      params: StoreParams,
      body: CreateFileBatchRequest,
      response: FileBatchObject,
      responses: {
        404: 'Unknown vector store, or a file is not one of your files.',
        413: 'Your vector stores hold SVC_VECTOR_STORES_TENANT_LIMIT already.',
      },
      example: { file_ids: ['file-abc123', 'file-def456'], attributes: { team: 'support' } },
      handler: async (ctx: AppContext, { params, body }) => {
        const files: FileToAdd[] = body.files
          ? body.files.map((f) => ({
              fileId: f.file_id,
              attributes: f.attributes,
              chunking: chunkingOf(f.chunking_strategy),
            }))
          : body.file_ids!.map((fileId) => ({
              fileId,
              attributes: body.attributes,
              chunking: chunkingOf(body.chunking_strategy),
            }));
        const { batchId } = await addFiles(ctx, params.id, files, true, body.files ? 'body.files' : 'body.file_ids');
        const b = await getFileBatch(ctx.deps.db, principalOf(ctx).tenantId, params.id, batchId!);
        return batchObject(b!);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores/:id/file_batches/:batch_id',
      access,
      tags,
      summary: "A file batch: status and its files' counts.",
      params: BatchParams,
      response: FileBatchObject,
      handler: async (ctx: AppContext, { params }) => {
        const b = await getFileBatch(ctx.deps.db, principalOf(ctx).tenantId, params.id, params.batch_id);
        if (!b) throw notFound('File batch');
        const out = batchObject(b);
        if (out.status === 'in_progress') pollAfter(ctx);
        return out;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/vector_stores/:id/file_batches/:batch_id/cancel',
      access,
      tags,
      summary: 'Cancels a file batch: its files not read yet become cancelled (those read stay).',
      params: BatchParams,
      response: FileBatchObject,
      handler: async (ctx: AppContext, { params }) => {
        const tenantId = principalOf(ctx).tenantId;
        if (!(await cancelFileBatch(ctx.deps.db, tenantId, params.id, params.batch_id))) throw notFound('File batch');
        await cancelStoredJob(ctx, params.batch_id, 'file batch');
        return batchObject((await getFileBatch(ctx.deps.db, tenantId, params.id, params.batch_id))!);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/vector_stores/:id/file_batches/:batch_id/files',
      access,
      tags,
      summary: "A file batch's files (filter by status, limit, order, after).",
      params: BatchParams,
      query: ListVectorStoreFilesQuery,
      response: VectorStoreFileList,
      handler: async (ctx: AppContext, { params, query }) => {
        if (!(await getFileBatch(ctx.deps.db, principalOf(ctx).tenantId, params.id, params.batch_id)))
          throw notFound('File batch');
        return filesPage(
          ctx,
          { storeId: params.id, batchId: params.batch_id, ...query },
          'among the files of this batch',
        );
      },
    }),
  ];
}

/**
 * OpenAI's hint to a client polling something still in progress (its SDK's `poll` helpers wait this long instead of
 * their default 5 s): files are usually read within a second.
 */
const pollAfter = (ctx: AppContext) => ctx.set('openai-poll-after-ms', '500');
