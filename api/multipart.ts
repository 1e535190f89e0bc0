import { readFile, unlink } from 'node:fs/promises';
import { koaBody } from 'koa-body';
import { AppError, invalid } from '../schema/errors';
import { unstorablePaths } from '../schema/storable';
import type { AppContext } from './context';

export interface Upload {
  /** The bytes of field `file`. */
  bytes: Buffer;
  filename?: string;
  /** Text fields of the form (first value of each). */
  fields: Record<string, string>;
}

interface FormidableFile {
  filepath: string;
  originalFilename?: string | null;
  size: number;
}

/** Lets a refused client finish sending, so it reads our 4xx instead of a reset connection. */
function drain(ctx: AppContext): void {
  if (!ctx.req.readableEnded) ctx.req.resume();
}

/**
 * Parses a `multipart/form-data` upload (koa-body with formidable) with one file in field `file`,
 * capped at `limit` bytes. Temporary files are removed before returning.
 * @throws AppError unsupported_media_type (not multipart), payload_too_large (413), invalid_request
 */
export async function readUpload(ctx: AppContext, limit: number): Promise<Upload> {
  if (!ctx.is('multipart/form-data')) {
    drain(ctx);
    throw new AppError(
      'unsupported_media_type',
      'Send the document as multipart/form-data with the file in field "file".',
    );
  }
  const declared = Number(ctx.get('Content-Length') || 0);
  // Multipart framing and text fields add a little over the file size itself.
  if (declared > limit + 256 * 1024) {
    drain(ctx);
    throw new AppError('payload_too_large', `The upload is larger than the ${limit}-byte limit.`);
  }
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      maxFileSize: limit,
      maxTotalFileSize: limit,
      maxFiles: 1,
      maxFields: 20,
      maxFieldsSize: 256 * 1024,
      allowEmptyFiles: false,
      minFileSize: 1,
    },
  });
  try {
    await parse(ctx as never, async () => {});
  } catch (err) {
    drain(ctx);
    if (err instanceof AppError) throw err; // e.g. the body timeout (408)
    const e = err as { httpCode?: number; message?: string };
    if (e.httpCode === 413)
      throw new AppError('payload_too_large', `The upload is larger than the ${limit}-byte limit.`);
    if (/allowEmptyFiles|minFileSize/.test(e.message ?? ''))
      throw new AppError('invalid_request', 'The file is empty.');
    if (/maxFiles/.test(e.message ?? ''))
      throw new AppError('invalid_request', 'Send exactly one file, in field "file".');
    throw new AppError('invalid_request', `Malformed multipart body: ${(e.message ?? 'parse error').slice(0, 200)}`);
  }
  const files = (ctx.request as { files?: Record<string, FormidableFile | FormidableFile[]> }).files ?? {};
  const all = Object.values(files).flat();
  try {
    const raw = files.file;
    const file = Array.isArray(raw) ? raw[0] : raw;
    if (!file)
      throw new AppError('invalid_request', 'Missing the file: send it in multipart field "file".', {
        details: [{ path: 'body.file', message: 'required' }],
      });
    const bytes = await readFile(file.filepath);
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries((ctx.request.body ?? {}) as Record<string, unknown>)) {
      const first = Array.isArray(v) ? v[0] : v;
      if (typeof first === 'string') fields[k] = first;
    }
    const filename = file.originalFilename ?? undefined;
    const bad = [...unstorablePaths(filename, 'body.file.filename'), ...unstorablePaths(fields, 'body')];
    if (bad.length) throw invalid(bad, 'upload');
    return { bytes, filename, fields };
  } finally {
    await Promise.all(all.map((f) => unlink(f.filepath).catch(() => {})));
  }
}
