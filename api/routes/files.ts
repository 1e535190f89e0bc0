import { fileTypeFromBuffer } from 'file-type';
import { z } from 'zod';
import { decodeText } from '../../activities/knowledge/sniff';
import { createFile, deleteFile, getFile, getFileContent, listFiles, type FileRow } from '../../activities/store/files';
import { AppError, invalid, notFound } from '../../schema/errors';
import {
  DeletedFile,
  ExpiresAfterSeconds,
  FileId,
  FileList,
  FileObject,
  FilePurpose,
  ListFilesQuery,
  UploadFileForm,
} from '../../schema/files';
import { principalOf, type AppContext } from '../context';
import { cursorPage, unknownCursor } from '../list-page';
import { readUpload } from '../multipart';
import { defineRoute, type RouteSpec } from '../route';

const access = { scope: 'runtime:chat' } as const;
const tags = ['files'];
const IdParams = z.object({ id: FileId });
const unknownFile = () => notFound('File');

/** OpenAI's File object of a stored file. */
export function fileObject(f: FileRow): z.output<typeof FileObject> {
  return {
    id: f.id,
    object: 'file',
    bytes: f.size_bytes,
    created_at: f.created_at,
    ...(f.expires_at !== null ? { expires_at: f.expires_at } : {}),
    filename: f.filename,
    purpose: f.purpose,
    status: 'processed',
  };
}

/** The 413 of a file (or an upload's part) that would take the tenant's files past SVC_FILES_TENANT_LIMIT. */
export function overTenantLimit(limit: number, held: number): AppError {
  return new AppError(
    'payload_too_large',
    `Your files would hold more than ${limit} bytes (SVC_FILES_TENANT_LIMIT; ${held} held now, pending uploads' parts included): delete files you no longer need.`,
  );
}

/**
 * What a stored file's bytes are: their signature's type, else text, else octet-stream (never the name's claim).
 * `head`: the bytes are the start of the file (an upload's parts are told by their first bytes).
 */
export async function contentTypeOf(bytes: Buffer, head = false): Promise<string> {
  const found = await fileTypeFromBuffer(bytes);
  if (found) return found.mime;
  return decodeText(bytes, head) !== null ? 'text/plain' : 'application/octet-stream';
}

/** A file name as stored and sent back: no path, no control characters, at most 255 characters. */
export function cleanName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, 255);
  return clean || 'upload';
}

/** Reads the upload form's purpose and expiry. @throws AppError invalid_request naming the field */
function formFields(fields: Record<string, string>): { purpose: string; expiresInSeconds?: number } {
  const issues: Array<{ path: string; message: string }> = [];
  const purpose = FilePurpose.safeParse(fields.purpose);
  if (!purpose.success)
    issues.push({
      path: 'body.purpose',
      message:
        fields.purpose === undefined
          ? 'purpose is required (user_data for files given to chat and responses)'
          : `must be one of ${FilePurpose.options.join(', ')}`,
    });
  const anchor = fields['expires_after[anchor]'];
  const seconds = fields['expires_after[seconds]'];
  let expiresInSeconds: number | undefined;
  if (anchor !== undefined && anchor !== 'created_at')
    issues.push({ path: 'body.expires_after.anchor', message: 'the only anchor is created_at' });
  if (seconds !== undefined) {
    const s = ExpiresAfterSeconds.safeParse(seconds);
    if (s.success) expiresInSeconds = s.data;
    else issues.push({ path: 'body.expires_after.seconds', message: 'must be a whole number from 3600 to 2592000' });
  } else if (anchor !== undefined)
    issues.push({ path: 'body.expires_after.seconds', message: 'required with expires_after[anchor]' });
  if (issues.length) throw invalid(issues);
  return { purpose: purpose.data!, expiresInSeconds };
}

/** OpenAI's Files API: a tenant's files, by id, for `file_id` in chat and responses. */
export function fileRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/files',
      access,
      tags,
      summary:
        "Upload a file (OpenAI's Files API; multipart fields file and purpose, optional expires_after[anchor]/[seconds]); its id is then a file_id for chat file parts and the Responses API's input_file and input_image.",
      consumes: 'multipart/form-data',
      body: UploadFileForm,
      response: FileObject,
      responses: {
        413: "The file is over SVC_UPLOAD_LIMIT, or the tenant's files would hold more than SVC_FILES_TENANT_LIMIT.",
        415: 'Not multipart/form-data.',
      },
      handler: async (ctx: AppContext) => {
        const { tenantId } = principalOf(ctx);
        const { config, db } = ctx.deps;
        const upload = await readUpload(ctx, config.uploadLimit);
        const { purpose, expiresInSeconds } = formFields(upload.fields);
        const stored = await createFile(db, {
          tenantId,
          filename: cleanName(upload.filename),
          purpose,
          contentType: await contentTypeOf(upload.bytes),
          bytes: upload.bytes,
          expiresInSeconds,
          tenantLimit: config.filesTenantLimit,
        });
        if ('over' in stored) throw overTenantLimit(config.filesTenantLimit, stored.over);
        return fileObject(stored);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/files',
      access,
      tags,
      summary: "The tenant's files, newest first by default (purpose, limit, order, after as OpenAI's).",
      query: ListFilesQuery,
      response: FileList,
      handler: async (ctx: AppContext, { query }) => {
        const rows = await listFiles(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...query });
        if (!rows) throw unknownCursor(query.after!, 'file', 'among your files');
        return cursorPage(rows, query.limit, fileObject);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/files/:id',
      access,
      tags,
      summary: 'A file of the tenant (404 once deleted or expired).',
      params: IdParams,
      response: FileObject,
      handler: async (ctx: AppContext, { params }) => {
        const f = await getFile(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!f) throw unknownFile();
        return fileObject(f);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/files/:id/content',
      access,
      tags,
      summary: "A file's bytes, as uploaded (application/octet-stream, as an attachment).",
      params: IdParams,
      produces: ['application/octet-stream'],
      handler: async (ctx: AppContext, { params }) => {
        const f = await getFileContent(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!f) throw unknownFile();
        ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(f.filename)}`);
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.type = 'application/octet-stream';
        return f.bytes;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/files/:id',
      access,
      tags,
      summary:
        'Deletes a file of the tenant and removes it from its vector stores (what chats and responses read from it stays where it was used).',
      params: IdParams,
      response: DeletedFile,
      handler: async (ctx: AppContext, { params }) => {
        if (!(await deleteFile(ctx.deps.db, principalOf(ctx).tenantId, params.id))) throw unknownFile();
        return { id: params.id, object: 'file' as const, deleted: true as const };
      },
    }),
  ];
}
