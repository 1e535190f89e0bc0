import { extractDocument } from '../../activities/knowledge/extract';
import { detectMediaType } from '../../activities/knowledge/sniff';
import { fetchDocument } from '../../activities/knowledge/web-fetch';
import { decodeBase64 } from '../../activities/media/base64';
import { loadImage } from '../../activities/media/image-input';
import type { Config } from '../../schema/config';
import {
  MAX_MESSAGE_CHARS,
  type FileSource,
  type LoadedMessage,
  type LoadedPart,
  type PersonaMessage,
} from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { Db } from '../../activities/store/db';
import { getFileContent } from '../../activities/store/files';

/** A file of the tenant's /v1/files by id (null when unknown, deleted or expired). */
export type FileReader = (id: string) => Promise<{ bytes: Buffer; filename: string; contentType: string } | null>;

/** The tenant's /v1/files as a FileReader. */
export function tenantFiles(db: Db, tenantId: string): FileReader {
  return async (id) => {
    const f = await getFileContent(db, tenantId, id);
    return f && { bytes: f.bytes, filename: f.filename, contentType: f.content_type };
  };
}

/** A file of /v1/files by id. @throws AppError not_found (404) when the tenant has no such file */
export async function readFileById(files: FileReader | undefined, id: string) {
  const f = files ? await files(id) : null;
  if (!f)
    throw new AppError(
      'not_found',
      `No file '${id}' among your files (unknown, deleted or expired; see GET /v1/files).`,
    );
  return f;
}

/** Where the client put message `i`'s part `j` (an error names it). */
export type PartPath = (message: number, part: number, kind: 'image_url' | 'file') => string;

const chatPath: PartPath = (i, j, kind) =>
  kind === 'image_url' ? `body.messages.${i}.content.${j}.image_url.url` : `body.messages.${i}.content.${j}.file`;

/** An error about a part, naming where it is. */
export function atPart(err: unknown, where: string): unknown {
  if (!(err instanceof AppError)) return err;
  return new AppError(err.code, `${where}: ${err.message}`, {
    details: [{ path: where, message: err.message }],
    headers: err.headers,
    cause: err,
  });
}

/** A file's base64 (bare or a data: URL) as bytes. @throws AppError invalid_request, payload_too_large */
function fileBytes(data: string, limit: number): Buffer {
  const bytes = decodeBase64(data, limit);
  if (bytes === 'invalid') throw new AppError('invalid_request', 'file_data is not valid base64.');
  if (bytes === 'tooLarge')
    throw new AppError('payload_too_large', `The file is larger than ${limit} bytes (SVC_UPLOAD_LIMIT).`);
  return bytes;
}

/**
 * The text of a file a message carries, as the lane gets it: read by the same parsers as an upload (type from the
 * bytes; PDF and DOCX in the capped processes) or, for a URL, fetched through the fetch guard like a page.
 * @throws AppError invalid_request, payload_too_large, unsupported_media_type, upstream_* (a URL's)
 */
export async function readAttachedFile(src: FileSource, config: Config, files?: FileReader): Promise<string> {
  let text: string;
  let name = src.filename;
  if (src.file_id !== undefined) {
    const f = await readFileById(files, src.file_id);
    name ??= f.filename;
    text = (await extractDocument(f.bytes, await detectMediaType(f.bytes))).text;
  } else if (src.file_url !== undefined) {
    const doc = await fetchDocument(src.file_url, {
      allowPrivate: config.allowPrivateFetch,
      maxBytes: config.uploadLimit,
      timeoutMs: 30_000,
    });
    text = doc.text;
  } else {
    const bytes = fileBytes(src.file_data ?? '', config.uploadLimit);
    text = (await extractDocument(bytes, await detectMediaType(bytes))).text;
  }
  if (text.length > MAX_MESSAGE_CHARS)
    throw new AppError(
      'payload_too_large',
      `The file's text is ${text.length} characters; at most ${MAX_MESSAGE_CHARS} fit in a message.`,
    );
  const shown = name?.replace(/[\r\n"]+/g, ' ').trim();
  return `File${shown ? ` "${shown}"` : ''}:\n\n${text}`;
}

/** A file's text (`readAttachedFile`), an error naming where the file is (`where`). */
export function readFileAt(src: FileSource, config: Config, where: string, files?: FileReader): Promise<string> {
  return readAttachedFile(src, config, files).catch((err: unknown) => Promise.reject(atPart(err, where)));
}

/**
 * The image and file parts of a chat's messages made ready for the lane. Images are loaded as the vision route loads
 * them (an http(s) URL through the fetch guard, a data URL decoded; the type checked from the bytes; metadata
 * dropped; the longest side at most 2048) and passed on as data URLs: the lane's provider never fetches a URL the
 * client chose, and what it gets has been checked. Files become their text (`readAttachedFile`); a message left
 * with text alone is one string again. Messages without parts are returned as they are.
 * @throws AppError as `loadImage` and `readAttachedFile`, naming the part (`body.messages.N.content.M...`, or where
 * `path` says the part came from)
 */
/**
 * An image part's URL (http(s), through the fetch guard, or a data URL) loaded and checked as `loadImage` does, as the
 * data URL of the normalised image. @throws AppError as loadImage
 */
export async function loadImageUrl(url: string, config: Config): Promise<string> {
  const img = await loadImage(url.startsWith('data:') ? { image_base64: url } : { image_url: url }, config);
  return `data:${img.mediaType};base64,${img.bytes.toString('base64')}`;
}

export async function loadMessageParts(
  messages: PersonaMessage[],
  config: Config,
  path: PartPath = chatPath,
  files?: FileReader,
): Promise<LoadedMessage[]> {
  if (!messages.some((m) => Array.isArray(m.content))) return messages as LoadedMessage[];
  const loads: Array<Promise<void>> = [];
  const out = messages.map((m, i): LoadedMessage => {
    if (!Array.isArray(m.content)) return m as LoadedMessage;
    const parts: LoadedPart[] = new Array(m.content.length);
    m.content.forEach((part, j) => {
      if (part.type === 'text') parts[j] = part;
      else if (part.type === 'file')
        loads.push(
          readFileAt(part.file, config, path(i, j, 'file'), files).then(
            (text) => void (parts[j] = { type: 'text', text }),
          ),
        );
      else {
        loads.push(
          loadImageUrl(part.image_url.url, config).then(
            (url) => void (parts[j] = { type: 'image_url', image_url: { ...part.image_url, url } }),
            (err: unknown) => Promise.reject(atPart(err, path(i, j, 'image_url'))),
          ),
        );
      }
    });
    return { ...m, content: parts };
  });
  await Promise.all(loads);
  // A message whose files were its only other parts is text again, as a plain chat message is.
  for (const m of out)
    if (Array.isArray(m.content) && m.content.every((p) => p.type === 'text'))
      m.content = m.content.map((p) => (p as { text: string }).text).join('\n');
  return out;
}
