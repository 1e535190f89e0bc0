import { z } from 'zod';
import { cursorListOf } from './common';

/** OpenAI's file purposes a client may upload with. */
export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
export const FilePurpose = z.enum(FILE_PURPOSES);

export const FILE_ID = /^file-[A-Za-z0-9]{1,100}$/;
export const FileId = z.string().regex(FILE_ID, 'a file id (file-...)');

/** `expires_after[seconds]`: one hour to 30 days, as OpenAI's. */
export const ExpiresAfterSeconds = z.coerce.number().int().min(3600).max(2_592_000);

/** The upload form (documented; the route reads it with the multipart reader). */
export const UploadFileForm = z
  .object({
    file: z.string().meta({ format: 'binary' }).describe('The file (at most SVC_UPLOAD_LIMIT bytes).'),
    purpose: FilePurpose.describe('What the file is for; user_data for files given to chat and responses.'),
    'expires_after[anchor]': z.literal('created_at').optional(),
    'expires_after[seconds]': z
      .string()
      .optional()
      .describe('Seconds after creation when the file expires: 3600 to 2592000 (with anchor created_at).'),
  })
  .meta({ id: 'UploadFile' });

export const FileObject = z
  .object({
    id: z.string(),
    object: z.literal('file'),
    bytes: z.number().int(),
    created_at: z.number().int(),
    expires_at: z.number().int().optional().describe('Absent when the file does not expire.'),
    filename: z.string(),
    purpose: z.string(),
    status: z.literal('processed'),
  })
  .meta({ id: 'File' });

export const ListFilesQuery = z.object({
  purpose: z.string().max(40).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(10_000),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: FileId.optional(),
});

export const FileList = cursorListOf(FileObject, 'FileList');

export const DeletedFile = z
  .object({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) })
  .meta({ id: 'DeletedFile' });
