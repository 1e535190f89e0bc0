import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError, invalid, notFound } from '../../schema/errors';
import { createFile, heldBytes, lockTenantFiles, type FileRow } from './files';
import { newId } from './ids';

/** An upload (OpenAI's Upload object is made from it); `status` is `expired` for a pending upload past expires_at. */
export const UploadRow = z.object({
  id: z.string(),
  filename: z.string(),
  purpose: z.string(),
  mime_type: z.string(),
  bytes: z.coerce.number(),
  file_expires_seconds: z.coerce.number().nullable(),
  status: z.enum(['pending', 'completed', 'cancelled', 'expired']),
  file_id: z.string().nullable(),
  created_at: z.coerce.number(),
  expires_at: z.coerce.number(),
});
export type UploadRow = z.infer<typeof UploadRow>;

/** A part of an upload (OpenAI's UploadPart object). */
export const PartRow = z.object({ id: z.string(), upload_id: z.string(), created_at: z.coerce.number() });
export type PartRow = z.infer<typeof PartRow>;

const COLS = sql.fragment`id, filename, purpose, mime_type, bytes, file_expires_seconds,
  CASE WHEN status = 'pending' AND expires_at <= now() THEN 'expired' ELSE status END AS status, file_id,
  extract(epoch FROM created_at)::int8 AS created_at, extract(epoch FROM expires_at)::int8 AS expires_at`;

/** How long an upload takes parts (OpenAI's hour). */
export const UPLOAD_TTL_SECONDS = 3600;

/** Bytes of the assembled file read back to tell its type (its signature, or whether it is text). */
const HEAD_BYTES = 1024 * 1024;

/** Creates a pending upload of the tenant, taking parts for an hour. */
export async function createUpload(
  db: DatabasePool,
  u: {
    tenantId: string;
    filename: string;
    purpose: string;
    mimeType: string;
    bytes: number;
    fileExpiresSeconds?: number;
  },
): Promise<UploadRow> {
  return db.one(sql.type(UploadRow)`
    INSERT INTO uploads (id, tenant_id, filename, purpose, mime_type, bytes, file_expires_seconds, status, expires_at)
    VALUES (${newId('upload')}, ${u.tenantId}, ${u.filename}, ${u.purpose}, ${u.mimeType}, ${u.bytes},
      ${u.fileExpiresSeconds ?? null}, 'pending', now() + make_interval(secs => ${UPLOAD_TTL_SECONDS}))
    RETURNING ${COLS}`);
}

/**
 * The tenant's pending upload, read under the tenant's files lock (so no part, completion or cancel of it runs
 * meanwhile); `rule` says in the error what is refused otherwise.
 * @throws AppError not_found (unknown or another tenant's), invalid_request naming the status otherwise
 */
async function pendingUpload(tx: CommonQueryMethods, tenantId: string, id: string, rule: string): Promise<UploadRow> {
  await lockTenantFiles(tx, tenantId);
  const u = await tx.maybeOne(
    sql.type(UploadRow)`SELECT ${COLS} FROM uploads WHERE tenant_id = ${tenantId} AND id = ${id}`,
  );
  if (!u) throw notFound('Upload');
  if (u.status !== 'pending')
    throw new AppError('invalid_request', `Upload ${id} is ${u.status}: ${rule}.`, {
      details: [{ path: 'path.id', message: `the upload is ${u.status}` }],
    });
  return u;
}

/**
 * Adds a part to a pending upload of the tenant unless what the tenant holds (its files and its pending uploads'
 * parts) would then be more than `tenantLimit` bytes.
 * @returns the part, or `{ over: bytes held }` when it does not fit
 * @throws AppError as `pendingUpload`
 */
export async function addUploadPart(
  db: DatabasePool,
  p: { tenantId: string; uploadId: string; bytes: Buffer; tenantLimit: number },
): Promise<PartRow | { over: number }> {
  return db.transaction(async (tx) => {
    await pendingUpload(tx, p.tenantId, p.uploadId, 'parts are added only to a pending upload');
    const held = await heldBytes(tx, p.tenantId);
    if (held + p.bytes.length > p.tenantLimit) return { over: held };
    return tx.one(sql.type(PartRow)`
      INSERT INTO upload_parts (id, upload_id, tenant_id, size_bytes, bytes)
      VALUES (${newId('part')}, ${p.uploadId}, ${p.tenantId}, ${p.bytes.length}, ${sql.binary(p.bytes)})
      RETURNING id, upload_id, extract(epoch FROM created_at)::int8 AS created_at`);
  });
}

/**
 * Completes a pending upload of the tenant: its parts, in the order `partIds` lists them (each once, all of this
 * upload), are joined into a new file of /v1/files (in the database, by `createFile`, under the tenant's files lock
 * and limit), its type told by `typeOf` from the file's first bytes (`head`: more follow), then the parts are deleted
 * and the upload is completed. Everything in one transaction: a refusal leaves the upload and its parts as they were.
 * @returns the completed upload and its file, or `{ over: bytes held }` when the file does not fit the tenant's limit
 * @throws AppError not_found, invalid_request (the status; a part id unknown, another upload's or listed twice, naming
 * `body.part_ids.N`; the parts' size not the upload's bytes; `md5` not the file's)
 */
export async function completeUpload(
  db: DatabasePool,
  c: {
    tenantId: string;
    uploadId: string;
    partIds: readonly string[];
    md5?: string;
    tenantLimit: number;
    typeOf: (bytes: Buffer, head: boolean) => Promise<string>;
  },
): Promise<{ upload: UploadRow; file: FileRow } | { over: number }> {
  return db.transaction(async (tx) => {
    const u = await pendingUpload(tx, c.tenantId, c.uploadId, 'only a pending upload is completed');
    const sizes = new Map(
      (
        await tx.any(sql.type(z.object({ id: z.string(), size_bytes: z.coerce.number() }))`
          SELECT id, size_bytes FROM upload_parts
          WHERE tenant_id = ${c.tenantId} AND upload_id = ${c.uploadId}
            AND id = ANY(${sql.array([...c.partIds], 'text')})`)
      ).map((p) => [p.id, p.size_bytes]),
    );
    const seen = new Set<string>();
    const bad = c.partIds.flatMap((id, i) => {
      const message = !sizes.has(id)
        ? `no part '${id}' of this upload`
        : seen.has(id)
          ? `part '${id}' is listed twice`
          : undefined;
      seen.add(id);
      return message ? [{ path: `body.part_ids.${i}`, message }] : [];
    });
    if (bad.length) throw invalid(bad);
    const size = c.partIds.reduce((n, id) => n + sizes.get(id)!, 0);
    if (size !== u.bytes)
      throw new AppError(
        'invalid_request',
        `The parts hold ${size} bytes, but the upload was created for ${u.bytes} bytes (the joined file must be that size).`,
        { details: [{ path: 'body.part_ids', message: `${size} bytes, not ${u.bytes}` }] },
      );
    const head = await tx.oneFirst(sql.type(z.object({ head: z.instanceof(Buffer) }))`
      WITH listed AS (
        SELECT p.bytes, o.n, sum(p.size_bytes) OVER (ORDER BY o.n) - p.size_bytes AS start
        FROM unnest(${sql.array([...c.partIds], 'text')}) WITH ORDINALITY AS o(id, n)
        JOIN upload_parts p ON p.id = o.id
        WHERE p.tenant_id = ${c.tenantId} AND p.upload_id = ${c.uploadId})
      SELECT substring(
          string_agg(substring(bytes FROM 1 FOR ${HEAD_BYTES}), ''::bytea ORDER BY n) FROM 1 FOR ${HEAD_BYTES}) AS head
      FROM listed WHERE start < ${HEAD_BYTES}`);
    const file = await createFile(tx, {
      tenantId: c.tenantId,
      filename: u.filename,
      purpose: u.purpose,
      contentType: await c.typeOf(head, size > head.length),
      bytes: { uploadId: c.uploadId, partIds: c.partIds, size },
      expiresInSeconds: u.file_expires_seconds ?? undefined,
      tenantLimit: c.tenantLimit,
    });
    if ('over' in file) return file;
    if (c.md5 !== undefined) {
      const md5 = await tx.oneFirst(sql.type(z.object({ md5: z.string() }))`
        SELECT md5(bytes) AS md5 FROM files WHERE id = ${file.id}`);
      if (md5 !== c.md5.toLowerCase())
        throw new AppError('invalid_request', `md5 ${c.md5} is not the md5 of the parts joined (${md5}).`, {
          details: [{ path: 'body.md5', message: 'not the md5 of the assembled file' }],
        });
    }
    await tx.query(sql.unsafe`DELETE FROM upload_parts WHERE tenant_id = ${c.tenantId} AND upload_id = ${c.uploadId}`);
    const upload = await tx.one(sql.type(UploadRow)`
      UPDATE uploads SET status = 'completed', file_id = ${file.id}
      WHERE tenant_id = ${c.tenantId} AND id = ${c.uploadId} RETURNING ${COLS}`);
    return { upload, file };
  });
}

/** Cancels a pending upload of the tenant, deleting its parts. @throws AppError as `pendingUpload` */
export async function cancelUpload(db: DatabasePool, tenantId: string, id: string): Promise<UploadRow> {
  return db.transaction(async (tx) => {
    await pendingUpload(tx, tenantId, id, 'only a pending upload is cancelled');
    await tx.query(sql.unsafe`DELETE FROM upload_parts WHERE tenant_id = ${tenantId} AND upload_id = ${id}`);
    return tx.one(sql.type(UploadRow)`
      UPDATE uploads SET status = 'cancelled' WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING ${COLS}`);
  });
}
