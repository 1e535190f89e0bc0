import { loadImage } from '../../activities/media/image-input';
import type { Config } from '../../schema/config';
import type { ContentPart, PersonaMessage } from '../../schema/chat';
import { AppError } from '../../schema/errors';

/** Where the client put message `i`'s part `j` (an error names it). */
export type PartPath = (message: number, part: number) => string;

/**
 * The image parts of a chat's messages, loaded as the vision route loads an image (an http(s) URL through the fetch
 * guard, a data URL decoded; the type checked from the bytes; EXIF and other metadata dropped; the longest side at
 * most 2048) and passed on as data URLs: the lane's provider never fetches a URL the client chose, and what it gets
 * has been checked. Messages without images are returned as they are.
 * @throws AppError as `loadImage` (400, 413, 415, 502, 504), naming the part (`body.messages.N.content.M...`, or
 * where `path` says the part came from)
 */
export async function loadImageParts(
  messages: PersonaMessage[],
  config: Config,
  path: PartPath = (i, j) => `body.messages.${i}.content.${j}.image_url.url`,
): Promise<PersonaMessage[]> {
  if (!messages.some((m) => Array.isArray(m.content))) return messages;
  const loads: Array<Promise<void>> = [];
  const out = messages.map((m, i) => {
    if (!Array.isArray(m.content)) return m;
    const parts: ContentPart[] = [...m.content];
    parts.forEach((part, j) => {
      if (part.type !== 'image_url') return;
      const { url } = part.image_url;
      const src = url.startsWith('data:') ? { image_base64: url } : { image_url: url };
      loads.push(
        loadImage(src, config).then(
          (img) => {
            const data = `data:${img.mediaType};base64,${img.bytes.toString('base64')}`;
            parts[j] = { type: 'image_url', image_url: { ...part.image_url, url: data } };
          },
          (err: unknown) => {
            if (!(err instanceof AppError)) throw err;
            const where = path(i, j);
            throw new AppError(err.code, `${where}: ${err.message}`, {
              details: [{ path: where, message: err.message }],
              headers: err.headers,
              cause: err,
            });
          },
        ),
      );
    });
    return { ...m, content: parts };
  });
  await Promise.all(loads);
  return out;
}
