import { z } from 'zod';
import type { FileRow } from '../../activities/store/files';
import {
  addUploadPart,
  cancelUpload,
  completeUpload,
  createUpload,
  type UploadRow,
} from '../../activities/store/uploads';
import { AppError } from '../../schema/errors';
import {
  AddUploadPartForm,
  CompleteUploadRequest,
  CreateUploadRequest,
  MAX_PART_BYTES,
  UploadId,
  UploadObject,
  UploadPartObject,
} from '../../schema/uploads';
import { principalOf, type AppContext } from '../context';
import { readForm } from '../multipart';
import { defineRoute, type RouteSpec } from '../route';
import { cleanName, contentTypeOf, fileObject, overTenantLimit } from './files';

const access = { scope: 'runtime:chat' } as const;
const tags = ['files'];
const IdParams = z.object({ id: UploadId });
const NOT_FORM = 'Send the part as multipart/form-data with its bytes in field "data".';

/** OpenAI's Upload object of an upload, with the file it made (null until it completed). */
function uploadObject(u: UploadRow, file: FileRow | null = null): z.output<typeof UploadObject> {
  return {
    id: u.id,
    object: 'upload',
    bytes: u.bytes,
    created_at: u.created_at,
    expires_at: u.expires_at,
    filename: u.filename,
    purpose: u.purpose,
    mime_type: u.mime_type,
    status: u.status,
    file: file && fileObject(file),
  };
}

/** The 413 of a declared size over a limit, naming `body.bytes` and the setting. */
function tooLarge(bytes: number, limit: number, setting: string): AppError {
  return new AppError(
    'payload_too_large',
    `bytes: ${bytes} is more than ${limit}, the largest file here (${setting}).`,
    {
      details: [{ path: 'body.bytes', message: `at most ${limit} (${setting})` }],
    },
  );
}

/**
 * OpenAI's Uploads API: a file sent in parts (each at most 64 MiB), joined in the order the client lists them into a
 * file of /v1/files. An upload takes parts for an hour; the parts count against the tenant's files limit meanwhile.
 */
export function uploadRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/uploads',
      access,
      tags,
      idempotent: true,
      summary:
        "Create an upload (OpenAI's Uploads API): a file of `bytes` bytes sent in parts, pending for an hour; completing it makes a file of /v1/files.",
      body: CreateUploadRequest,
      response: UploadObject,
      responses: {
        413: 'bytes is over SVC_UPLOADS_FILE_LIMIT (or over SVC_FILES_TENANT_LIMIT, which no file can pass).',
      },
      example: { filename: 'training.jsonl', purpose: 'batch', bytes: 2048, mime_type: 'application/jsonl' },
      handler: async (ctx: AppContext, { body }) => {
        const { config, db } = ctx.deps;
        if (body.bytes > config.uploadsFileLimit)
          throw tooLarge(body.bytes, config.uploadsFileLimit, 'SVC_UPLOADS_FILE_LIMIT');
        if (body.bytes > config.filesTenantLimit)
          throw tooLarge(body.bytes, config.filesTenantLimit, 'SVC_FILES_TENANT_LIMIT');
        const u = await createUpload(db, {
          tenantId: principalOf(ctx).tenantId,
          filename: cleanName(body.filename),
          purpose: body.purpose,
          mimeType: body.mime_type,
          bytes: body.bytes,
          fileExpiresSeconds: body.expires_after?.seconds,
        });
        return uploadObject(u);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/uploads/:id/parts',
      access,
      tags,
      summary:
        'Add a part to a pending upload (multipart field data, at most 64 MiB); parts may be sent in any order and at once.',
      params: IdParams,
      consumes: 'multipart/form-data',
      body: AddUploadPartForm,
      response: UploadPartObject,
      responses: {
        400: 'The upload is not pending (completed, cancelled or expired), or the part is missing or empty.',
        404: 'Unknown upload.',
        413: "The part is over 64 MiB (or SVC_UPLOADS_FILE_LIMIT), or the tenant's files and pending parts would hold more than SVC_FILES_TENANT_LIMIT.",
        415: 'Not multipart/form-data.',
      },
      handler: async (ctx: AppContext, { params }) => {
        const { config, db } = ctx.deps;
        const form = await readForm(ctx, Math.min(MAX_PART_BYTES, config.uploadsFileLimit), { data: 1 }, NOT_FORM);
        const data = form.files.data?.[0];
        if (!data)
          throw new AppError('invalid_request', 'Missing the part: send its bytes in multipart field "data".', {
            details: [{ path: 'body.data', message: 'required' }],
          });
        const part = await addUploadPart(db, {
          tenantId: principalOf(ctx).tenantId,
          uploadId: params.id,
          bytes: data.bytes,
          tenantLimit: config.filesTenantLimit,
        });
        if ('over' in part) throw overTenantLimit(config.filesTenantLimit, part.over);
        return { id: part.id, object: 'upload.part' as const, created_at: part.created_at, upload_id: part.upload_id };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/uploads/:id/complete',
      access,
      tags,
      summary:
        'Complete a pending upload: its parts joined in the order part_ids lists them (their sizes adding up to bytes; md5 checked when given) become a file of /v1/files, answered as the upload with its file.',
      params: IdParams,
      body: CompleteUploadRequest,
      response: UploadObject,
      responses: {
        400: 'The upload is not pending; a part id is unknown, another upload’s or listed twice; the parts’ size is not bytes; md5 differs.',
        404: 'Unknown upload.',
        413: "The tenant's files would hold more than SVC_FILES_TENANT_LIMIT.",
      },
      example: { part_ids: ['part_abc123', 'part_def456'] },
      handler: async (ctx: AppContext, { params, body }) => {
        const { config, db } = ctx.deps;
        const done = await completeUpload(db, {
          tenantId: principalOf(ctx).tenantId,
          uploadId: params.id,
          partIds: body.part_ids,
          md5: body.md5,
          tenantLimit: config.filesTenantLimit,
          typeOf: contentTypeOf,
        });
        if ('over' in done) throw overTenantLimit(config.filesTenantLimit, done.over);
        return uploadObject(done.upload, done.file);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/uploads/:id/cancel',
      access,
      tags,
      summary: 'Cancel a pending upload (its parts are deleted; no part may be added after).',
      params: IdParams,
      response: UploadObject,
      responses: { 400: 'The upload is not pending.', 404: 'Unknown upload.' },
      handler: async (ctx: AppContext, { params }) =>
        uploadObject(await cancelUpload(ctx.deps.db, principalOf(ctx).tenantId, params.id)),
    }),
  ];
}
