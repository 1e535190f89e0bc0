import { z } from 'zod';
import { FileObject, FilePurpose } from './files';

/** OpenAI's limit on one part of an upload (64 MB; SVC_UPLOADS_FILE_LIMIT applies when lower). */
export const MAX_PART_BYTES = 64 * 1024 * 1024;

export const UPLOAD_ID = /^upload_[A-Za-z0-9]{1,100}$/;
export const UploadId = z.string().regex(UPLOAD_ID, 'an upload id (upload_...)');
export const PartId = z.string().regex(/^part_[A-Za-z0-9]{1,100}$/, 'a part id (part_...)');

/** A MIME type as `type/subtype`, with parameters or without (`text/plain; charset=utf-8`). */
const MimeType = z
  .string()
  .max(255)
  .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;.*)?$/, 'a MIME type (type/subtype)');

export const CreateUploadRequest = z
  .object({
    filename: z
      .string()
      .min(1)
      .max(1000)
      .describe('The name of the file (kept without a path, as /v1/files keeps it).'),
    purpose: FilePurpose.describe("The file's purpose, as /v1/files takes it."),
    bytes: z
      .number()
      .int()
      .min(1)
      .describe('The size of the whole file; the parts must add up to it (at most SVC_UPLOADS_FILE_LIMIT).'),
    mime_type: MimeType.describe('Recorded and echoed; the stored file’s type is told by its bytes.'),
    expires_after: z
      .object({ anchor: z.literal('created_at'), seconds: z.number().int().min(3600).max(2_592_000) })
      .strict()
      .optional()
      .describe('When the file made from the upload expires (the upload itself expires after an hour).'),
  })
  .strict()
  .meta({ id: 'CreateUploadRequest' });

/** The part form (documented; the route reads it with the multipart reader). */
export const AddUploadPartForm = z
  .object({
    data: z
      .string()
      .meta({ format: 'binary' })
      .describe('The bytes of the part (at most 64 MiB and SVC_UPLOADS_FILE_LIMIT).'),
  })
  .meta({ id: 'AddUploadPartRequest' });

export const CompleteUploadRequest = z
  .object({
    part_ids: z.array(PartId).min(1).max(10_000).describe('The parts, in the order their bytes are joined; each once.'),
    md5: z
      .string()
      .regex(/^[0-9A-Fa-f]{32}$/, 'an md5 checksum (32 hexadecimal digits)')
      .optional()
      .describe('When given, the md5 of the joined bytes must be this.'),
  })
  .strict()
  .meta({ id: 'CompleteUploadRequest' });

export const UploadObject = z
  .object({
    id: z.string(),
    object: z.literal('upload'),
    bytes: z.number().int(),
    created_at: z.number().int(),
    expires_at: z.number().int(),
    filename: z.string(),
    purpose: z.string(),
    mime_type: z.string(),
    status: z.enum(['pending', 'completed', 'cancelled', 'expired']),
    file: FileObject.nullable().describe('The file made when the upload completed; null before.'),
  })
  .meta({ id: 'Upload' });

export const UploadPartObject = z
  .object({
    id: z.string(),
    object: z.literal('upload.part'),
    created_at: z.number().int(),
    upload_id: z.string(),
  })
  .meta({ id: 'UploadPart' });
