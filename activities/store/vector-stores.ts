import { sql, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { Attributes, Filter } from '../../schema/vector-stores';
import { cursorAfter } from './cursor';
import { randomToken } from './ids';

const FileCounts = z.object({
  in_progress: z.coerce.number(),
  completed: z.coerce.number(),
  failed: z.coerce.number(),
  cancelled: z.coerce.number(),
  total: z.coerce.number(),
});
export type FileCounts = z.infer<typeof FileCounts>;

export const VectorStoreRow = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  expires_days: z.number().nullable(),
  created_at: z.coerce.number(),
  last_active_at: z.coerce.number(),
  expired: z.boolean(),
  usage_bytes: z.coerce.number(),
  file_counts: FileCounts,
});
export type VectorStoreRow = z.infer<typeof VectorStoreRow>;

const COUNTS = sql.fragment`json_build_object(
    'in_progress', count(*) FILTER (WHERE f.status = 'in_progress'),
    'completed', count(*) FILTER (WHERE f.status = 'completed'),
    'failed', count(*) FILTER (WHERE f.status = 'failed'),
    'cancelled', count(*) FILTER (WHERE f.status = 'cancelled'),
    'total', count(*))`;

/** Whether the store (table or alias `t`) has expired: `expires_after.days` past its last activity. */
const expiredOf = (t: string) =>
  sql.fragment`coalesce(${sql.identifier([t, 'last_active_at'])} + make_interval(days => ${sql.identifier([t, 'expires_days'])}) <= now(), false)`;

/** A store's columns with its file counts and usage (`vector_stores` as `s`). */
const STORE_COLS = sql.fragment`s.id, s.name, s.description, s.metadata, s.expires_days,
  extract(epoch FROM s.created_at)::int8 AS created_at, extract(epoch FROM s.last_active_at)::int8 AS last_active_at,
  ${expiredOf('s')} AS expired,
  c.usage_bytes, c.file_counts`;
const STORE_COUNTS = sql.fragment`LEFT JOIN LATERAL (
    SELECT coalesce(sum(f.usage_bytes), 0)::int8 AS usage_bytes, ${COUNTS} AS file_counts
    FROM vector_store_files f WHERE f.vector_store_id = s.id AND f.tenant_id = s.tenant_id) c ON true`;

/** Creates a vector store of the tenant. */
export async function createVectorStore(
  db: DatabasePool,
  v: { tenantId: string; name: string; description?: string; metadata: Record<string, string>; expiresDays?: number },
): Promise<string> {
  const id = `vs_${randomToken(24)}`;
  await db.query(sql.unsafe`
    INSERT INTO vector_stores (id, tenant_id, name, description, metadata, expires_days)
    VALUES (${id}, ${v.tenantId}, ${v.name}, ${v.description ?? null}, ${sql.jsonb(v.metadata)},
      ${v.expiresDays ?? null})`);
  return id;
}

/** A vector store of the tenant with its counts; null when unknown or another tenant's. */
export async function getVectorStore(db: DatabasePool, tenantId: string, id: string): Promise<VectorStoreRow | null> {
  return db.maybeOne(sql.type(VectorStoreRow)`
    SELECT ${STORE_COLS} FROM vector_stores s ${STORE_COUNTS} WHERE s.tenant_id = ${tenantId} AND s.id = ${id}`);
}

/** Which of these ids are the tenant's stores, each with whether it has expired (one read, no counts). */
export async function storesExpired(db: DatabasePool, tenantId: string, ids: string[]): Promise<Map<string, boolean>> {
  const rows = await db.any(sql.type(z.object({ id: z.string(), expired: z.boolean() }))`
    SELECT id, ${expiredOf('vector_stores')} AS expired
    FROM vector_stores WHERE tenant_id = ${tenantId} AND id = ANY(${sql.array(ids, 'text')})`);
  return new Map(rows.map((r) => [r.id, r.expired]));
}

/** The tenant's vector stores in creation order after the cursor; null when `after` is not one of them. */
export async function listVectorStores(
  db: DatabasePool,
  o: { tenantId: string; order: 'asc' | 'desc'; after?: string; limit: number },
): Promise<readonly VectorStoreRow[] | null> {
  const cursor = await cursorAfter(db, { table: 'vector_stores', alias: 's', ...o });
  if (!cursor) return null;
  return db.any(sql.type(VectorStoreRow)`
    SELECT ${STORE_COLS} FROM vector_stores s ${STORE_COUNTS}
    WHERE s.tenant_id = ${o.tenantId} ${cursor.where} ORDER BY ${cursor.orderBy} LIMIT ${o.limit + 1}`);
}

/**
 * Changes a store's name, expiry (null: none) or metadata (replaced); absent fields stay. An update makes the store
 * active (OpenAI's `last_active_at`). @returns false when the tenant has no such store
 */
export async function updateVectorStore(
  db: DatabasePool,
  tenantId: string,
  id: string,
  u: { name?: string; expiresDays?: number | null; metadata?: Record<string, string> },
): Promise<boolean> {
  const sets = [sql.fragment`last_active_at = now()`];
  if (u.name !== undefined) sets.push(sql.fragment`name = ${u.name}`);
  if (u.expiresDays !== undefined) sets.push(sql.fragment`expires_days = ${u.expiresDays}`);
  if (u.metadata !== undefined) sets.push(sql.fragment`metadata = ${sql.jsonb(u.metadata)}`);
  const r = await db.query(sql.unsafe`
    UPDATE vector_stores SET ${sql.join(sets, sql.fragment`, `)} WHERE tenant_id = ${tenantId} AND id = ${id}`);
  return r.rowCount > 0;
}

/** Deletes a store with its files' chunks (not the files of /v1/files). @returns false when there was none */
export async function deleteVectorStore(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM vector_stores WHERE tenant_id = ${tenantId} AND id = ${id}`);
  return r.rowCount > 0;
}

/** A store file's chunking as stored: the strategy's type and its token windows. */
export interface FileChunking {
  type: 'auto' | 'static';
  maxTokens: number;
  overlapTokens: number;
}

export const VectorStoreFileRow = z.object({
  id: z.string(),
  vector_store_id: z.string(),
  filename: z.string(),
  status: z.enum(['in_progress', 'completed', 'cancelled', 'failed']),
  last_error: z
    .object({ code: z.enum(['server_error', 'unsupported_file', 'invalid_file']), message: z.string() })
    .nullable(),
  usage_bytes: z.coerce.number(),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
  max_chunk_tokens: z.number(),
  overlap_tokens: z.number(),
  created_at: z.coerce.number(),
  generation: z.string(),
});
export type VectorStoreFileRow = z.infer<typeof VectorStoreFileRow>;

const FILE_COLS = sql.fragment`vector_store_files.id, vector_store_files.vector_store_id, vector_store_files.filename,
  vector_store_files.status, vector_store_files.last_error, vector_store_files.usage_bytes,
  vector_store_files.attributes, vector_store_files.max_chunk_tokens, vector_store_files.overlap_tokens,
  extract(epoch FROM vector_store_files.created_at)::int8 AS created_at, vector_store_files.generation`;

/** A file to add to a store. */
export interface FileToAdd {
  fileId: string;
  attributes?: Attributes | null;
  chunking: FileChunking;
}

/**
 * Adds files of the tenant's /v1/files to one of its stores (a file already there starts again with the new
 * attributes and chunking, under a new generation), optionally as a new batch, in one transaction; each is then
 * `in_progress` until a workflow indexes it. The last entry for a file id counts.
 * @returns the rows, the new batch's id, and the generation to index; or the ids that are not the tenant's live
 * files, or `{ over: bytes held }` when the tenant's stores hold `tenantLimit` already (nothing is added); null when
 * the store is not the tenant's
 */
export async function addVectorStoreFiles(
  db: DatabasePool,
  o: { tenantId: string; storeId: string; files: FileToAdd[]; batch: boolean; tenantLimit: number },
): Promise<
  | { rows: readonly VectorStoreFileRow[]; batchId: string | null; generation: string }
  | { missing: string[] }
  | { over: number }
  | null
> {
  const byId = new Map(o.files.map((f) => [f.fileId, f]));
  const list = [...byId.values()].map((f) => ({
    file_id: f.fileId,
    ...(f.attributes != null ? { attributes: f.attributes } : {}),
    max_tokens: f.chunking.maxTokens,
    overlap: f.chunking.overlapTokens,
    ctype: f.chunking.type,
  }));
  const generation = randomToken(16);
  return db.transaction(async (tx) => {
    // The store row locked: a delete of the store waits for this, and the files cannot outlive it.
    const store = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM vector_stores WHERE tenant_id = ${o.tenantId} AND id = ${o.storeId} FOR UPDATE`);
    if (!store) return null;
    const found = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM files WHERE tenant_id = ${o.tenantId} AND id = ANY(${sql.array([...byId.keys()], 'text')})
        AND (expires_at IS NULL OR expires_at > now())`);
    const have = new Set(found);
    const missing = [...byId.keys()].filter((id) => !have.has(id));
    if (missing.length) return { missing };
    // Files being read when the limit is reached still finish: the limit refuses new ones.
    const held = await tx.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT coalesce(sum(usage_bytes), 0)::int8 AS n FROM vector_store_files WHERE tenant_id = ${o.tenantId}`);
    if (held >= o.tenantLimit) return { over: held };
    const batchId = o.batch ? `vsfb_${randomToken(24)}` : null;
    if (batchId)
      await tx.query(sql.unsafe`
        INSERT INTO vector_store_file_batches (id, tenant_id, vector_store_id)
        VALUES (${batchId}, ${o.tenantId}, ${o.storeId})`);
    const rows = await tx.any(sql.type(VectorStoreFileRow)`
      INSERT INTO vector_store_files AS vector_store_files (vector_store_id, id, tenant_id, filename, status,
        attributes, max_chunk_tokens, overlap_tokens, chunking_type, batch_id, generation)
      SELECT ${o.storeId}, x.file_id, ${o.tenantId}, f.filename, 'in_progress', x.attributes, x.max_tokens, x.overlap,
        x.ctype, ${batchId}, ${generation}
      FROM jsonb_to_recordset(${sql.jsonb(list)}) AS x(file_id text, attributes jsonb, max_tokens int, overlap int,
        ctype text)
      JOIN files f ON f.tenant_id = ${o.tenantId} AND f.id = x.file_id
      ON CONFLICT (vector_store_id, id) DO UPDATE SET status = 'in_progress', last_error = NULL, usage_bytes = 0,
        attributes = excluded.attributes, max_chunk_tokens = excluded.max_chunk_tokens,
        overlap_tokens = excluded.overlap_tokens, chunking_type = excluded.chunking_type,
        batch_id = excluded.batch_id, generation = excluded.generation, filename = excluded.filename
      RETURNING ${FILE_COLS}`);
    await tx.query(sql.unsafe`UPDATE vector_stores SET last_active_at = now() WHERE id = ${o.storeId}`);
    return { rows, batchId, generation };
  });
}

/** A file of one of the tenant's stores; null when there is none. */
export async function getVectorStoreFile(
  db: DatabasePool,
  tenantId: string,
  storeId: string,
  fileId: string,
): Promise<VectorStoreFileRow | null> {
  return db.maybeOne(sql.type(VectorStoreFileRow)`
    SELECT ${FILE_COLS} FROM vector_store_files
    WHERE tenant_id = ${tenantId} AND vector_store_id = ${storeId} AND id = ${fileId}`);
}

/**
 * A store's files (or a batch's) in creation order after the cursor, optionally of one status.
 * @returns the rows, or null when `after` is not a file of the list
 */
export async function listVectorStoreFiles(
  db: DatabasePool,
  o: {
    tenantId: string;
    storeId: string;
    batchId?: string;
    filter?: string;
    order: 'asc' | 'desc';
    after?: string;
    limit: number;
  },
): Promise<readonly VectorStoreFileRow[] | null> {
  const within = sql.fragment`vector_store_files.vector_store_id = ${o.storeId} ${
    o.batchId !== undefined ? sql.fragment`AND vector_store_files.batch_id = ${o.batchId}` : sql.fragment``
  }`;
  const cursor = await cursorAfter(db, { table: 'vector_store_files', ...o, live: within });
  if (!cursor) return null;
  const status = o.filter !== undefined ? sql.fragment`AND status = ${o.filter}` : sql.fragment``;
  return db.any(sql.type(VectorStoreFileRow)`
    SELECT ${FILE_COLS} FROM vector_store_files WHERE tenant_id = ${o.tenantId} AND ${within} ${status}
      ${cursor.where}
    ORDER BY ${cursor.orderBy} LIMIT ${o.limit + 1}`);
}

/** Replaces a store file's attributes. @returns the row, or null when there is none */
export async function updateVectorStoreFileAttributes(
  db: DatabasePool,
  o: { tenantId: string; storeId: string; fileId: string; attributes: Attributes | null },
): Promise<VectorStoreFileRow | null> {
  return db.maybeOne(sql.type(VectorStoreFileRow)`
    UPDATE vector_store_files SET attributes = ${o.attributes === null ? null : sql.jsonb(o.attributes)}
    WHERE tenant_id = ${o.tenantId} AND vector_store_id = ${o.storeId} AND id = ${o.fileId}
    RETURNING ${FILE_COLS}`);
}

/** Removes a file from a store with its chunks (the file in /v1/files stays). @returns false when absent */
export async function deleteVectorStoreFile(
  db: DatabasePool,
  tenantId: string,
  storeId: string,
  fileId: string,
): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    DELETE FROM vector_store_files WHERE tenant_id = ${tenantId} AND vector_store_id = ${storeId} AND id = ${fileId}`);
  return r.rowCount > 0;
}

/** A store file's parsed text; null when the file is not in the store, '' before it is read. */
export async function vectorStoreFileContent(
  db: DatabasePool,
  tenantId: string,
  storeId: string,
  fileId: string,
): Promise<string | null> {
  const r = await db.maybeOne(sql.type(z.object({ content: z.string().nullable() }))`
    SELECT content FROM vector_store_files
    WHERE tenant_id = ${tenantId} AND vector_store_id = ${storeId} AND id = ${fileId}`);
  return r ? (r.content ?? '') : null;
}

/**
 * What the indexing activity reads: the file's bytes and chunking, while this generation of it is still
 * `in_progress` (null otherwise: removed, added again, cancelled or done), and whether its file still exists.
 */
export async function fileToIndex(
  db: DatabasePool,
  o: FileGeneration,
): Promise<{ bytes: Buffer | null; maxTokens: number; overlapTokens: number } | null> {
  return db.maybeOne(sql.type(
    z.object({ bytes: z.instanceof(Buffer).nullable(), maxTokens: z.number(), overlapTokens: z.number() }),
  )`
    SELECT f.bytes, v.max_chunk_tokens AS "maxTokens", v.overlap_tokens AS "overlapTokens"
    FROM vector_store_files v
    LEFT JOIN files f ON f.tenant_id = v.tenant_id AND f.id = v.id AND (f.expires_at IS NULL OR f.expires_at > now())
    WHERE v.tenant_id = ${o.tenantId} AND v.vector_store_id = ${o.storeId} AND v.id = ${o.fileId}
      AND v.generation = ${o.generation} AND v.status = 'in_progress'`);
}

/** Which generation of which file of which store (a newer add of the file supersedes it). */
export interface FileGeneration {
  tenantId: string;
  storeId: string;
  fileId: string;
  generation: string;
}

/** The file's row while this generation is the current one and still `in_progress`. */
const CURRENT = (o: FileGeneration) => sql.fragment`
  tenant_id = ${o.tenantId} AND vector_store_id = ${o.storeId} AND id = ${o.fileId}
  AND generation = ${o.generation} AND status = 'in_progress'`;

/**
 * Begins (or begins again, after a retry) the reading of a file's generation: every chunk the file has is removed
 * (an earlier generation's, or what an earlier attempt of this one wrote). @returns false when this generation is no
 * longer the file's current one in progress (removed, added again, cancelled): nothing is to be written
 */
export async function startIndexing(db: DatabasePool, o: FileGeneration): Promise<boolean> {
  return db.transaction(async (tx) => {
    const held = await tx.exists(sql.unsafe`SELECT 1 FROM vector_store_files WHERE ${CURRENT(o)} FOR UPDATE`);
    if (held)
      await tx.query(sql.unsafe`
        DELETE FROM vector_store_chunks
        WHERE tenant_id = ${o.tenantId} AND vector_store_id = ${o.storeId} AND file_id = ${o.fileId}`);
    return held;
  });
}

/**
 * Writes a group of a file's chunks (numbered from `from`) under its generation, while that generation is current
 * and in progress. @returns false when it is not (nothing written)
 */
export async function writeChunks(
  db: DatabasePool,
  o: FileGeneration & { from: number; chunks: Array<{ text: string; embedding?: number[] }> },
): Promise<boolean> {
  if (!o.chunks.length) return true;
  const rows = o.chunks.map((c, i) => ({ ord: o.from + i, text: c.text, embedding: c.embedding ?? null }));
  const r = await db.query(sql.unsafe`
    INSERT INTO vector_store_chunks (tenant_id, vector_store_id, file_id, generation, ord, text, embedding)
    SELECT ${o.tenantId}, ${o.storeId}, ${o.fileId}, ${o.generation}, x.ord, x.text,
      CASE WHEN x.embedding IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(x.embedding)::real) END
    FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS x(ord int, text text, embedding jsonb)
    WHERE EXISTS (SELECT 1 FROM vector_store_files WHERE ${CURRENT(o)})`);
  return r.rowCount > 0;
}

/**
 * Ends the reading of a file's generation: its text and usage written, status `completed` (searches see its chunks
 * from now on), any chunk of another generation removed; only while the generation is current and in progress.
 * @returns whether it was written
 */
export async function finishIndexing(
  db: DatabasePool,
  o: FileGeneration & { content: string; usageBytes: number },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const r = await tx.query(sql.unsafe`
      UPDATE vector_store_files SET status = 'completed', content = ${o.content}, usage_bytes = ${o.usageBytes}
      WHERE ${CURRENT(o)}`);
    if (!r.rowCount) return false;
    await tx.query(sql.unsafe`
      DELETE FROM vector_store_chunks
      WHERE tenant_id = ${o.tenantId} AND vector_store_id = ${o.storeId} AND file_id = ${o.fileId}
        AND generation <> ${o.generation}`);
    return true;
  });
}

/**
 * Marks a file's generation `failed` with OpenAI's error code (unless it is no longer in progress); without `fileId`,
 * every file of the generation still in progress (its workflow could not be started).
 */
export async function failIndexing(
  db: DatabasePool,
  o: {
    tenantId: string;
    storeId: string;
    fileId?: string;
    generation: string;
    error: { code: 'server_error' | 'unsupported_file' | 'invalid_file'; message: string };
  },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE vector_store_files SET status = 'failed', last_error = ${sql.jsonb(o.error)}
    WHERE tenant_id = ${o.tenantId} AND vector_store_id = ${o.storeId}
      ${o.fileId !== undefined ? sql.fragment`AND id = ${o.fileId}` : sql.fragment``}
      AND generation = ${o.generation} AND status = 'in_progress'`);
}

export const FileBatchRow = z.object({
  id: z.string(),
  vector_store_id: z.string(),
  created_at: z.coerce.number(),
  cancelled: z.boolean(),
  file_counts: FileCounts,
});
export type FileBatchRow = z.infer<typeof FileBatchRow>;

/** A file batch of one of the tenant's stores, with the counts of its files; null when there is none. */
export async function getFileBatch(
  db: DatabasePool,
  tenantId: string,
  storeId: string,
  batchId: string,
): Promise<FileBatchRow | null> {
  return db.maybeOne(sql.type(FileBatchRow)`
    SELECT b.id, b.vector_store_id, extract(epoch FROM b.created_at)::int8 AS created_at, b.cancelled,
      (SELECT ${COUNTS} FROM vector_store_files f WHERE f.batch_id = b.id AND f.tenant_id = b.tenant_id) AS file_counts
    FROM vector_store_file_batches b
    WHERE b.tenant_id = ${tenantId} AND b.vector_store_id = ${storeId} AND b.id = ${batchId}`);
}

/**
 * Cancels a batch: its files still in progress become `cancelled` (the indexing of each stops at its next write).
 * @returns false when the tenant has no such batch
 */
export async function cancelFileBatch(
  db: DatabasePool,
  tenantId: string,
  storeId: string,
  batchId: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const r = await tx.query(sql.unsafe`
      UPDATE vector_store_file_batches SET cancelled = true
      WHERE tenant_id = ${tenantId} AND vector_store_id = ${storeId} AND id = ${batchId}`);
    if (!r.rowCount) return false;
    await tx.query(sql.unsafe`
      UPDATE vector_store_files SET status = 'cancelled',
        last_error = NULL
      WHERE tenant_id = ${tenantId} AND batch_id = ${batchId} AND status = 'in_progress'`);
    return true;
  });
}

/** Makes stores active now (a search), which moves their expiry. */
export async function touchVectorStores(db: DatabasePool, tenantId: string, ids: string[]): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE vector_stores SET last_active_at = now()
    WHERE tenant_id = ${tenantId} AND id = ANY(${sql.array(ids, 'text')})`);
}

/** A comparison's operator in SQL. */
const OPS: Record<string, FragmentSqlToken> = {
  gt: sql.fragment`>`,
  gte: sql.fragment`>=`,
  lt: sql.fragment`<`,
  lte: sql.fragment`<=`,
};

/**
 * An attribute filter as a condition on `f.attributes`: equality as JSON (so 1 equals 1.0 and "1" does not), order
 * comparisons on numbers or on strings as the value is (an attribute of another type does not match), `ne` and
 * `nin` true for a file without the attribute.
 */
export function filterCondition(f: Filter): FragmentSqlToken {
  if ('filters' in f) {
    const parts = f.filters.map((x) => sql.fragment`(${filterCondition(x)})`);
    return sql.fragment`${sql.join(parts, f.type === 'and' ? sql.fragment` AND ` : sql.fragment` OR `)}`;
  }
  const attr = sql.fragment`(f.attributes -> ${f.key})`;
  switch (f.type) {
    case 'eq':
      return sql.fragment`${attr} = ${sql.jsonb(f.value as never)}`;
    case 'ne':
      return sql.fragment`${attr} IS DISTINCT FROM ${sql.jsonb(f.value as never)}`;
    case 'in':
      return sql.fragment`coalesce(${sql.jsonb(f.value as never)} @> jsonb_build_array(${attr}), false)`;
    case 'nin':
      return sql.fragment`NOT coalesce(${sql.jsonb(f.value as never)} @> jsonb_build_array(${attr}), false)`;
    default: {
      const op = OPS[f.type];
      return typeof f.value === 'number'
        ? sql.fragment`(jsonb_typeof(${attr}) = 'number' AND (${attr})::numeric ${op} ${f.value})`
        : sql.fragment`(jsonb_typeof(${attr}) = 'string' AND (${attr} #>> '{}') ${op} ${String(f.value)})`;
    }
  }
}

const Ranked = z.object({ id: z.string(), score: z.number() });

/** What a search is over: the tenant's stores (checked), files completed, matching the filter. */
function searchScope(o: { tenantId: string; storeIds: string[]; filter?: Filter }): FragmentSqlToken {
  return sql.fragment`c.tenant_id = ${o.tenantId} AND c.vector_store_id = ANY(${sql.array(o.storeIds, 'text')})
    AND EXISTS (SELECT 1 FROM vector_store_files f
      WHERE f.vector_store_id = c.vector_store_id AND f.id = c.file_id AND f.tenant_id = ${o.tenantId}
        AND f.generation = c.generation AND f.status = 'completed' ${o.filter ? sql.fragment`AND (${filterCondition(o.filter)})` : sql.fragment``})`;
}

/**
 * Chunks matching a query's words, best first: those matching all of them (`websearch_to_tsquery`), then, for plain
 * word queries, those matching some; score `ts_rank_cd` normalised to 0-1 (rank / (rank + 1)).
 */
export async function textRanking(
  db: DatabasePool,
  o: { tenantId: string; storeIds: string[]; filter?: Filter; query: string; limit: number },
): Promise<Array<{ id: string; score: number }>> {
  const rows = await db.any(sql.type(Ranked.extend({ whole: z.boolean() }))`
    WITH q AS (SELECT s AS whole, CASE WHEN s::text ~ '(!|<->|<[0-9]+>)' OR s::text = '' THEN s
        ELSE replace(s::text, ' & ', ' | ')::tsquery END AS loose
      FROM websearch_to_tsquery('english', ${o.query}) AS s)
    SELECT c.id::text AS id, ts_rank_cd(c.tsv, q.loose, 32)::float8 AS score, c.tsv @@ q.whole AS whole
    FROM vector_store_chunks c, q
    WHERE ${searchScope(o)} AND c.tsv @@ q.loose
    ORDER BY whole DESC, score DESC, c.id
    LIMIT ${o.limit}`);
  return rows.map((r) => ({ id: r.id, score: r.score }));
}

/** Whether any chunk of the stores has an embedding (else a search needs no query embedding). */
export async function storesHaveVectors(db: DatabasePool, tenantId: string, storeIds: string[]): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM vector_store_chunks
    WHERE tenant_id = ${tenantId} AND vector_store_id = ANY(${sql.array(storeIds, 'text')}) AND embedding IS NOT NULL`);
}

/** Chunks nearest a query's (unit) embedding by cosine similarity, best first; chunks without vectors are skipped. */
export async function vectorRanking(
  db: DatabasePool,
  o: { tenantId: string; storeIds: string[]; filter?: Filter; embedding: number[]; limit: number },
): Promise<Array<{ id: string; score: number }>> {
  const rows = await db.any(sql.type(Ranked)`
    SELECT c.id::text AS id, d.score
    FROM vector_store_chunks c,
      LATERAL (SELECT sum(a * b)::float8 AS score
        FROM unnest(c.embedding, ${sql.array(o.embedding, 'float4')}) AS t(a, b)) d
    WHERE ${searchScope(o)} AND cardinality(c.embedding) = ${o.embedding.length}
    ORDER BY d.score DESC, c.id
    LIMIT ${o.limit}`);
  return [...rows];
}

export const ChunkHit = z.object({
  id: z.string(),
  file_id: z.string(),
  filename: z.string(),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
  text: z.string(),
});

/** Chunks by id with their file's name and attributes, in the order of `ids`. */
export async function chunksById(db: DatabasePool, tenantId: string, ids: string[]) {
  if (!ids.length) return [];
  const rows = await db.any(sql.type(ChunkHit)`
    SELECT c.id::text AS id, c.file_id, f.filename, f.attributes, c.text
    FROM vector_store_chunks c
    JOIN vector_store_files f
      ON f.vector_store_id = c.vector_store_id AND f.id = c.file_id AND f.generation = c.generation
    WHERE c.tenant_id = ${tenantId} AND c.id = ANY(${sql.array(ids, 'int8')})`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}
