import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { cursorAfter } from './cursor';
import { randomToken } from './ids';

/** A stored file's description (OpenAI's File object is made from it). */
export const FileRow = z.object({
  id: z.string(),
  filename: z.string(),
  purpose: z.string(),
  content_type: z.string(),
  size_bytes: z.coerce.number(),
  created_at: z.coerce.number(),
  expires_at: z.coerce.number().nullable(),
});
export type FileRow = z.infer<typeof FileRow>;

const COLS = sql.fragment`id, filename, purpose, content_type, size_bytes,
  extract(epoch FROM created_at)::int8 AS created_at, extract(epoch FROM expires_at)::int8 AS expires_at`;
const LIVE = sql.fragment`(expires_at IS NULL OR expires_at > now())`;

/**
 * Stores a file of the tenant unless its live files would then hold more than `tenantLimit` bytes (one statement: the
 * sum and the insert, under a per-tenant lock so two uploads cannot both pass the check). The tenant's expired files
 * are removed on the way.
 * @returns the new file, or `{ over: bytes held }` when it does not fit
 */
export async function createFile(
  db: DatabasePool,
  f: {
    tenantId: string;
    filename: string;
    purpose: string;
    contentType: string;
    bytes: Buffer;
    expiresInSeconds?: number;
    tenantLimit: number;
  },
): Promise<FileRow | { over: number }> {
  const id = `file-${randomToken(24)}`;
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${f.tenantId}, 1106))`);
    await tx.query(sql.unsafe`DELETE FROM files WHERE tenant_id = ${f.tenantId} AND expires_at <= now()`);
    const held = await tx.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT coalesce(sum(size_bytes), 0)::int8 AS n FROM files WHERE tenant_id = ${f.tenantId}`);
    if (held + f.bytes.length > f.tenantLimit) return { over: held };
    return tx.one(sql.type(FileRow)`
      INSERT INTO files (id, tenant_id, filename, purpose, content_type, size_bytes, bytes, expires_at)
      VALUES (${id}, ${f.tenantId}, ${f.filename}, ${f.purpose}, ${f.contentType}, ${f.bytes.length},
        ${sql.binary(f.bytes)},
        ${f.expiresInSeconds !== undefined ? sql.fragment`now() + make_interval(secs => ${f.expiresInSeconds})` : null})
      RETURNING ${COLS}`);
  });
}

/** A live file of the tenant; null when unknown, expired or another tenant's. */
export async function getFile(db: DatabasePool, tenantId: string, id: string): Promise<FileRow | null> {
  return db.maybeOne(sql.type(FileRow)`
    SELECT ${COLS} FROM files WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`);
}

/** A live file's bytes and description; null when unknown. */
export async function getFileContent(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<(FileRow & { bytes: Buffer }) | null> {
  return db.maybeOne(sql.type(FileRow.extend({ bytes: z.instanceof(Buffer) }))`
    SELECT ${COLS}, bytes FROM files WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`);
}

/**
 * The tenant's live files, oldest or newest first, after the file `after` (a cursor: its place in that order),
 * optionally of one purpose; `limit + 1` are read so the caller knows whether more follow.
 * @returns the files, or null when `after` is not a live file of the tenant
 */
export async function listFiles(
  db: DatabasePool,
  o: { tenantId: string; purpose?: string; order: 'asc' | 'desc'; after?: string; limit: number },
): Promise<readonly FileRow[] | null> {
  const cursor = await cursorAfter(db, { table: 'files', ...o, live: LIVE });
  if (!cursor) return null;
  const purpose = o.purpose !== undefined ? sql.fragment`AND purpose = ${o.purpose}` : sql.fragment``;
  return db.any(sql.type(FileRow)`
    SELECT ${COLS} FROM files WHERE tenant_id = ${o.tenantId} AND ${LIVE} ${purpose} ${cursor.where}
    ORDER BY ${cursor.orderBy} LIMIT ${o.limit + 1}`);
}

/** Deletes a live file of the tenant; false when there was none. */
export async function deleteFile(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM files WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`);
  return r.rowCount > 0;
}
