import { readFile, unlink } from 'node:fs/promises';
import { koaBody } from 'koa-body';
import type { z } from 'zod';
import { AppError, invalid, zodDetails } from '../schema/errors';
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

/** One uploaded file of a form. */
export interface FormFile {
  bytes: Buffer;
  filename?: string;
}

/** A multipart form: its files by field, and its text fields (first value of each). */
export interface Form {
  files: Record<string, FormFile[]>;
  fields: Record<string, string>;
  /** Every value of each text field, in order (a list sent as repeated `name[]` fields). */
  lists: Record<string, string[]>;
}

/** A form's text fields checked by the route's schema. @throws AppError invalid_request naming each field */
export function formFields<T extends z.ZodType>(schema: T, fields: Record<string, unknown>): z.output<T> {
  const parsed = schema.safeParse(fields);
  if (!parsed.success) throw invalid(zodDetails(parsed.error.issues, 'body'));
  return parsed.data;
}

/**
 * Parses a `multipart/form-data` upload (koa-body with formidable) with one file in field `file`,
 * capped at `limit` bytes. Temporary files are removed before returning.
 * @throws AppError unsupported_media_type (not multipart), payload_too_large (413), invalid_request
 */
export async function readUpload(ctx: AppContext, limit: number): Promise<Upload> {
  const form = await readForm(
    ctx,
    limit,
    { file: 1 },
    'Send the document as multipart/form-data with the file in field "file".',
  );
  const file = form.files.file?.[0];
  if (!file)
    throw new AppError('invalid_request', 'Missing the file: send it in multipart field "file".', {
      details: [{ path: 'body.file', message: 'required' }],
    });
  return { bytes: file.bytes, filename: file.filename, fields: form.fields };
}

/**
 * Parses a `multipart/form-data` form whose files may only be in the fields `files` names, at most that many in each;
 * all files together at most `limit` bytes. Temporary files are removed before returning. File names and text fields
 * PostgreSQL cannot store are refused, as JSON bodies are.
 * @throws AppError unsupported_media_type (not multipart: `notMultipart` says what to send), payload_too_large (413),
 * invalid_request (an empty file, a file in another field or too many in one, a malformed body)
 */
export async function readForm(
  ctx: AppContext,
  limit: number,
  files: Record<string, number>,
  notMultipart: string,
): Promise<Form> {
  if (!ctx.is('multipart/form-data')) {
    drain(ctx);
    throw new AppError('unsupported_media_type', notMultipart);
  }
  const declared = Number(ctx.get('Content-Length') || 0);
  // Multipart framing and text fields add a little over the file size itself.
  if (declared > limit + 256 * 1024) {
    drain(ctx);
    throw new AppError('payload_too_large', `The upload is larger than the ${limit}-byte limit.`);
  }
  const maxFiles = Object.values(files).reduce((n, k) => n + k, 0);
  const names = Object.keys(files)
    .map((f) => `"${f}"`)
    .join(', ');
  // Files of one field come in the order they were sent (OpenAI's image[]: the first is the one a mask is for).
  // Formidable lists a file when its write ends, so a small file can pass a larger one sent before it: each is ranked
  // when its part begins.
  const sent = new WeakMap<object, number>();
  let begun = 0;
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      maxFileSize: limit,
      maxTotalFileSize: limit,
      maxFiles,
      maxFields: 20,
      maxFieldsSize: 256 * 1024,
      allowEmptyFiles: false,
      minFileSize: 1,
      onFileBegin: (_name: string, file: object) => void sent.set(file, begun++),
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
      throw new AppError(
        'invalid_request',
        maxFiles === 1
          ? `Send exactly one file, in field ${names}.`
          : `Send at most ${maxFiles} files (fields ${names}).`,
      );
    throw new AppError('invalid_request', `Malformed multipart body: ${(e.message ?? 'parse error').slice(0, 200)}`);
  }
  const parsed = (ctx.request as { files?: Record<string, FormidableFile | FormidableFile[]> }).files ?? {};
  const all = Object.values(parsed).flat();
  try {
    const out: Record<string, FormFile[]> = {};
    for (const [field, value] of Object.entries(parsed)) {
      const list = (Array.isArray(value) ? value : [value]).sort((a, b) => (sent.get(a) ?? 0) - (sent.get(b) ?? 0));
      const most = files[field];
      if (most === undefined)
        throw new AppError('invalid_request', `Files go in field ${names}, not "${field}".`, {
          details: [{ path: `body.${field}`, message: 'not a file field of this route' }],
        });
      if (list.length > most)
        throw new AppError('invalid_request', `At most ${most} file${most === 1 ? '' : 's'} in field "${field}".`, {
          details: [{ path: `body.${field}`, message: `at most ${most}` }],
        });
      out[field] = await Promise.all(
        list.map(async (f) => ({ bytes: await readFile(f.filepath), filename: f.originalFilename ?? undefined })),
      );
    }
    const fields: Record<string, string> = {};
    const lists: Record<string, string[]> = {};
    for (const [k, v] of Object.entries((ctx.request.body ?? {}) as Record<string, unknown>)) {
      const values = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
      if (!values.length) continue;
      fields[k] = values[0];
      lists[k] = values;
    }
    const bad = [
      ...Object.entries(out).flatMap(([field, list]) =>
        list.flatMap((f, i) =>
          unstorablePaths(f.filename, files[field] === 1 ? `body.${field}.filename` : `body.${field}.${i}.filename`),
        ),
      ),
      ...unstorablePaths(fields, 'body'),
      ...Object.entries(lists).flatMap(([k, values]) =>
        values.slice(1).flatMap((x, i) => unstorablePaths(x, `body.${k}.${i + 1}`)),
      ),
    ];
    if (bad.length) throw invalid(bad, 'upload');
    return { files: out, fields, lists };
  } finally {
    await Promise.all(all.map((f) => unlink(f.filepath).catch(() => {})));
  }
}
