import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
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
 * Takes the tenant's files lock for the rest of the transaction (file uploads, upload parts and completions of one
 * tenant wait for each other; taken again in the same transaction it is already held), removing the tenant's expired
 * files and the parts of its expired uploads on the way.
 */
export async function lockTenantFiles(tx: CommonQueryMethods, tenantId: string): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${tenantId}, 1106))`);
  await tx.query(sql.unsafe`DELETE FROM files WHERE tenant_id = ${tenantId} AND expires_at <= now()`);
  await tx.query(sql.unsafe`
    DELETE FROM upload_parts p USING uploads u
    WHERE p.tenant_id = ${tenantId} AND u.id = p.upload_id AND u.expires_at <= now()`);
}

/**
 * Bytes the tenant holds against SVC_FILES_TENANT_LIMIT: its live files and the parts of its pending uploads (but
 * `exceptUpload`'s, whose parts are becoming a file). Read under `lockTenantFiles`.
 */
export async function heldBytes(tx: CommonQueryMethods, tenantId: string, exceptUpload?: string): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT (SELECT coalesce(sum(size_bytes), 0) FROM files WHERE tenant_id = ${tenantId})
      + (SELECT coalesce(sum(p.size_bytes), 0) FROM upload_parts p JOIN uploads u ON u.id = p.upload_id
         WHERE p.tenant_id = ${tenantId} AND u.status = 'pending' AND u.expires_at > now()
           AND u.id IS DISTINCT FROM ${exceptUpload ?? null})::int8 AS n`);
}

/** A new file's bytes: given, or the parts of an upload of the tenant joined in the database in the order listed. */
export type FileBytes = Buffer | { uploadId: string; partIds: readonly string[]; size: number };

/**
 * Stores a file of the tenant unless what it holds (`heldBytes`) would then be more than `tenantLimit` bytes (the sum
 * and the insert under the tenant's files lock, so two uploads cannot both pass the check). The tenant's expired files
 * are removed on the way. The bytes of an upload's parts are joined by the insert itself (they never leave the
 * database); those parts are not counted as held. `db` may be a transaction the caller already locked in.
 * @returns the new file, or `{ over: bytes held }` when it does not fit
 */
export async function createFile(
  db: CommonQueryMethods,
  f: {
    tenantId: string;
    filename: string;
    purpose: string;
    contentType: string;
    bytes: FileBytes;
    expiresInSeconds?: number;
    tenantLimit: number;
  },
): Promise<FileRow | { over: number }> {
  const id = `file-${randomToken(24)}`;
  const parts = Buffer.isBuffer(f.bytes) ? null : f.bytes;
  const size = parts ? parts.size : (f.bytes as Buffer).length;
  const expires =
    f.expiresInSeconds !== undefined ? sql.fragment`now() + make_interval(secs => ${f.expiresInSeconds})` : null;
  return db.transaction(async (tx) => {
    await lockTenantFiles(tx, f.tenantId);
    const held = await heldBytes(tx, f.tenantId, parts?.uploadId);
    if (held + size > f.tenantLimit) return { over: held };
    if (!parts)
      return tx.one(sql.type(FileRow)`
        INSERT INTO files (id, tenant_id, filename, purpose, content_type, size_bytes, bytes, expires_at)
        VALUES (${id}, ${f.tenantId}, ${f.filename}, ${f.purpose}, ${f.contentType}, ${size},
          ${sql.binary(f.bytes as Buffer)}, ${expires})
        RETURNING ${COLS}`);
    return tx.one(sql.type(FileRow)`
      INSERT INTO files (id, tenant_id, filename, purpose, content_type, size_bytes, bytes, expires_at)
      SELECT ${id}, ${f.tenantId}, ${f.filename}, ${f.purpose}, ${f.contentType}, ${size},
        string_agg(p.bytes, ''::bytea ORDER BY o.n), ${expires}
      FROM unnest(${sql.array([...parts.partIds], 'text')}) WITH ORDINALITY AS o(id, n)
      JOIN upload_parts p ON p.id = o.id
      WHERE p.tenant_id = ${f.tenantId} AND p.upload_id = ${parts.uploadId}
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

/** Deletes a live file of the tenant and removes it from the tenant's vector stores; false when there was none. */
export async function deleteFile(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const r = await tx.query(sql.unsafe`DELETE FROM files WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`);
    if (!r.rowCount) return false;
    // OpenAI's rule: a deleted file is removed from every vector store (with what the stores read from it).
    await tx.query(sql.unsafe`DELETE FROM vector_store_files WHERE tenant_id = ${tenantId} AND id = ${id}`);
    return true;
  });
}
