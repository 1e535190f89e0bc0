import { z } from 'zod';
import { Metadata } from './chat';
import { cursorListOf } from './common';
import { FileId } from './files';

export const VECTOR_STORE_ID = /^vs_[A-Za-z0-9]{1,100}$/;
export const VectorStoreId = z.string().regex(VECTOR_STORE_ID, 'a vector store id (vs_...)');
export const FileBatchId = z.string().regex(/^vsfb_[A-Za-z0-9]{1,100}$/, 'a file batch id (vsfb_...)');

/** OpenAI's `auto` chunking: windows of 800 tokens overlapping by 400. */
export const AUTO_CHUNKING = { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } as const;

/** Files one request may add (a batch's limit, OpenAI's). */
export const MAX_BATCH_FILES = 2000;

const StaticChunking = z
  .object({
    max_chunk_size_tokens: z.number().int().min(100).max(4096),
    chunk_overlap_tokens: z.number().int().min(0),
  })
  .strict()
  .refine((s) => s.chunk_overlap_tokens <= s.max_chunk_size_tokens / 2, {
    message: 'chunk_overlap_tokens must not exceed half of max_chunk_size_tokens',
    path: ['chunk_overlap_tokens'],
  });

/** How a file is split: OpenAI's `auto` (800/400) or `static` windows of tokens. */
export const ChunkingStrategy = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto') }).strict(),
  z.object({ type: z.literal('static'), static: StaticChunking }).strict(),
]);
export type ChunkingStrategy = z.output<typeof ChunkingStrategy>;

/** A file's attributes: up to 16 keys (≤ 64 characters) of strings (≤ 512), numbers or booleans. */
export const Attributes = z
  .record(z.string().max(64), z.union([z.string().max(512), z.number(), z.boolean()]))
  .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys');
export type Attributes = z.output<typeof Attributes>;

const ExpiresAfter = z.object({ anchor: z.literal('last_active_at'), days: z.number().int().min(1).max(365) }).strict();

export const CreateVectorStoreRequest = z
  .object({
    name: z.string().max(256).optional(),
    description: z.string().max(512).optional(),
    file_ids: z.array(FileId).max(500).optional(),
    chunking_strategy: ChunkingStrategy.optional(),
    expires_after: ExpiresAfter.optional(),
    metadata: Metadata.nullish(),
  })
  .strict()
  .meta({ id: 'CreateVectorStoreRequest' });

export const UpdateVectorStoreRequest = z
  .object({
    name: z.string().max(256).nullish(),
    expires_after: ExpiresAfter.nullish().describe('null: the store no longer expires.'),
    metadata: Metadata.nullish(),
  })
  .strict()
  .meta({ id: 'UpdateVectorStoreRequest' });

const FileCounts = z.object({
  in_progress: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  total: z.number().int(),
});

export const VectorStoreObject = z
  .object({
    id: z.string(),
    object: z.literal('vector_store'),
    created_at: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    usage_bytes: z.number().int(),
    file_counts: FileCounts,
    status: z.enum(['expired', 'in_progress', 'completed']),
    expires_after: ExpiresAfter.optional(),
    expires_at: z.number().int().nullable(),
    last_active_at: z.number().int().nullable(),
    metadata: z.record(z.string(), z.string()),
  })
  .meta({ id: 'VectorStore' });

export const VectorStoreList = cursorListOf(VectorStoreObject, 'VectorStoreList');

const CursorQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().max(200).optional(),
  before: z
    .string()
    .max(200)
    .optional()
    .refine((v) => v === undefined, 'before is not offered: page with after (and order) instead'),
};

export const ListVectorStoresQuery = z.object(CursorQuery);

export const ListVectorStoreFilesQuery = z.object({
  ...CursorQuery,
  filter: z.enum(['in_progress', 'completed', 'failed', 'cancelled']).optional(),
});

export const DeletedVectorStore = z
  .object({ id: z.string(), object: z.literal('vector_store.deleted'), deleted: z.literal(true) })
  .meta({ id: 'DeletedVectorStore' });

export const CreateVectorStoreFileRequest = z
  .object({
    file_id: FileId,
    chunking_strategy: ChunkingStrategy.optional(),
    attributes: Attributes.nullish(),
  })
  .strict()
  .meta({ id: 'CreateVectorStoreFileRequest' });

export const CreateFileBatchRequest = z
  .object({
    file_ids: z.array(FileId).min(1).max(MAX_BATCH_FILES).optional(),
    files: z.array(CreateVectorStoreFileRequest).min(1).max(MAX_BATCH_FILES).optional(),
    chunking_strategy: ChunkingStrategy.optional(),
    attributes: Attributes.nullish(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.file_ids === undefined) === (b.files === undefined))
      ctx.addIssue({ code: 'custom', path: ['file_ids'], message: 'send file_ids or files (one of them)' });
    if (b.files !== undefined && (b.chunking_strategy !== undefined || b.attributes != null))
      ctx.addIssue({
        code: 'custom',
        path: ['files'],
        message: 'with files, give chunking_strategy and attributes per file (the batch-wide ones apply to file_ids)',
      });
  })
  .meta({ id: 'CreateVectorStoreFileBatchRequest' });

export const UpdateAttributesRequest = z
  .object({ attributes: Attributes.nullable() })
  .strict()
  .meta({ id: 'UpdateVectorStoreFileAttributesRequest' });

export const VectorStoreFileObject = z
  .object({
    id: z.string(),
    object: z.literal('vector_store.file'),
    usage_bytes: z.number().int(),
    created_at: z.number().int(),
    vector_store_id: z.string(),
    status: z.enum(['in_progress', 'completed', 'cancelled', 'failed']),
    last_error: z
      .object({ code: z.enum(['server_error', 'unsupported_file', 'invalid_file']), message: z.string() })
      .nullable(),
    chunking_strategy: z.object({
      type: z.literal('static'),
      static: z.object({ max_chunk_size_tokens: z.number().int(), chunk_overlap_tokens: z.number().int() }),
    }),
    attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
  })
  .meta({ id: 'VectorStoreFile' });

export const VectorStoreFileList = cursorListOf(VectorStoreFileObject, 'VectorStoreFileList');

export const DeletedVectorStoreFile = z
  .object({ id: z.string(), object: z.literal('vector_store.file.deleted'), deleted: z.literal(true) })
  .meta({ id: 'DeletedVectorStoreFile' });

export const VectorStoreFileContent = z
  .object({
    object: z.literal('vector_store.file_content.page'),
    data: z.array(z.object({ type: z.literal('text'), text: z.string() })),
    has_more: z.boolean(),
    next_page: z.string().nullable(),
  })
  .meta({ id: 'VectorStoreFileContent' });

export const FileBatchObject = z
  .object({
    id: z.string(),
    object: z.literal('vector_store.files_batch'),
    created_at: z.number().int(),
    vector_store_id: z.string(),
    status: z.enum(['in_progress', 'completed', 'cancelled', 'failed']),
    file_counts: FileCounts,
  })
  .meta({ id: 'VectorStoreFileBatch' });

/** A comparison of one attribute (OpenAI's ComparisonFilter). */
export const ComparisonFilter = z
  .object({
    type: z.enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin']),
    key: z.string().min(1).max(64),
    value: z.union([
      z.string().max(512),
      z.number(),
      z.boolean(),
      z
        .array(z.union([z.string().max(512), z.number()]))
        .min(1)
        .max(100),
    ]),
  })
  .strict()
  .superRefine((f, ctx) => {
    const list = f.type === 'in' || f.type === 'nin';
    if (list !== Array.isArray(f.value))
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: list ? `${f.type} compares with a list of values` : `${f.type} compares with one value, not a list`,
      });
    if (['gt', 'gte', 'lt', 'lte'].includes(f.type) && typeof f.value === 'boolean')
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${f.type} compares numbers or strings` });
  });
export type ComparisonFilter = z.output<typeof ComparisonFilter>;

export type Filter = ComparisonFilter | { type: 'and' | 'or'; filters: Filter[] };

/** Attribute filters: comparisons combined by `and`/`or` (OpenAI's CompoundFilter), at most 8 levels deep. */
export const Filter: z.ZodType<Filter> = z.lazy(() =>
  z.union([
    ComparisonFilter,
    z
      .object({ type: z.enum(['and', 'or']), filters: z.array(Filter).min(1).max(32) })
      .strict()
      .refine((f) => depth(f) <= 8, 'filters nest at most 8 levels'),
  ]),
);

function depth(f: Filter): number {
  return 'filters' in f ? 1 + Math.max(0, ...f.filters.map(depth)) : 0;
}

export const RankingOptions = z
  .object({
    ranker: z.enum(['none', 'auto', 'default-2024-11-15', 'default_2024_08_21']).optional(),
    score_threshold: z.number().min(0).max(1).optional(),
    hybrid_search: z
      .object({ embedding_weight: z.number().min(0), text_weight: z.number().min(0) })
      .strict()
      .optional(),
  })
  .strict();
export type RankingOptions = z.output<typeof RankingOptions>;

export const SearchRequest = z
  .object({
    query: z.union([z.string().min(1).max(4000), z.array(z.string().min(1).max(4000)).min(1).max(10)]),
    rewrite_query: z.boolean().optional().describe('Accepted; the query is searched as given.'),
    max_num_results: z.number().int().min(1).max(50).default(10),
    filters: Filter.optional(),
    ranking_options: RankingOptions.optional(),
  })
  .strict()
  .meta({ id: 'VectorStoreSearchRequest' });

export const SearchResultItem = z.object({
  file_id: z.string(),
  filename: z.string(),
  score: z.number().min(0).max(1),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
  content: z.array(z.object({ type: z.literal('text'), text: z.string() })),
});

export const SearchResultsPage = z
  .object({
    object: z.literal('vector_store.search_results.page'),
    search_query: z.array(z.string()),
    data: z.array(SearchResultItem),
    has_more: z.boolean(),
    next_page: z.string().nullable(),
  })
  .meta({ id: 'VectorStoreSearchResultsPage' });
