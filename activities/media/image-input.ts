import { createHash } from 'node:crypto';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { fetchWeb } from '../knowledge/web-fetch';
import { decodeBase64 } from './base64';
import { lazyModule } from '../lazy-module';

/** Largest image we accept from any source, before normalising. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Longest side after normalising; providers scale larger images down anyway. */
export const MAX_SIDE = 2048;
const FETCH_TIMEOUT_MS = 15_000;
/** Decoding bombs: a small file that claims a huge canvas is refused by sharp before decoding. */
export const MAX_PIXELS = 60_000_000;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first image (see lazyModule)
export const sharp = lazyModule(() => require('sharp') as typeof import('sharp'));

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

export interface ImageSource {
  image_url?: string;
  image_base64?: string;
  image_path?: string;
}

/** The type from the magic bytes (never from a name or a Content-Type header). */
export function sniffImage(b: Buffer): ImageType | null {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (
    b.length >= 12 &&
    b.subarray(0, 4).toString('latin1') === 'RIFF' &&
    b.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return null;
}

const tooLarge = (field: string) =>
  new AppError('payload_too_large', `${field}: the image is larger than ${MAX_IMAGE_BYTES} bytes.`);

function fromBase64(s: string): Buffer {
  const bytes = decodeBase64(s, MAX_IMAGE_BYTES);
  if (bytes === 'invalid')
    throw new AppError('invalid_request', 'image_base64 is not valid base64.', {
      details: [{ path: 'body.image_base64', message: 'not base64' }],
    });
  if (bytes === 'tooLarge') throw tooLarge('image_base64');
  return bytes;
}

/**
 * Reads `image_path` only when its real path (symlinks resolved) lies inside the real
 * SVC_IMAGE_ROOT; unset root → every path is refused.
 */
async function fromPath(p: string, root: string | undefined): Promise<Buffer> {
  const refuse = (why: string) =>
    new AppError('invalid_request', `image_path ${why}`, { details: [{ path: 'body.image_path', message: why }] });
  if (!root) throw refuse('is not accepted: SVC_IMAGE_ROOT is not set on this server.');
  if (p.includes('\0')) throw refuse('contains a NUL character.');
  const realRoot = await realpath(root).catch(() => null);
  if (!realRoot) throw refuse('is not accepted: SVC_IMAGE_ROOT does not exist.');
  let real: string;
  try {
    real = await realpath(path.resolve(realRoot, p));
  } catch {
    throw refuse('does not exist under the image root.');
  }
  const rel = path.relative(realRoot, real);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw refuse('resolves outside the image root.');
  const fh = await open(real, 'r').catch(() => null);
  if (!fh) throw refuse('cannot be read.');
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refuse('is not a file.');
    if (st.size > MAX_IMAGE_BYTES) throw tooLarge('image_path');
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

async function fromUrl(url: string, config: Config): Promise<Buffer> {
  try {
    const r = await fetchWeb(url, {
      allowPrivate: config.allowPrivateFetch,
      maxBytes: MAX_IMAGE_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
    });
    return r.body;
  } catch (err) {
    if (err instanceof AppError && err.code === 'invalid_request') {
      throw new AppError('invalid_request', `image_url: ${err.message}`, {
        details: [{ path: 'body.image_url', message: err.message }],
      });
    }
    if (err instanceof AppError && /larger than/.test(err.message)) throw tooLarge('image_url');
    throw err;
  }
}

export interface NormalisedImage {
  /** JPEG (or PNG when the image has transparency), EXIF and every other metadata removed. */
  bytes: Buffer;
  mediaType: 'image/jpeg' | 'image/png';
  /** sha256 of the bytes as received: the image's identity across sources. */
  sha256: string;
  sourceType: ImageType;
  width: number;
  height: number;
}

/**
 * Loads the one given source, checks its type from the bytes (else 415) and normalises it: EXIF
 * orientation applied then all metadata dropped, longest side at most MAX_SIDE.
 * @throws AppError invalid_request, payload_too_large, unsupported_media_type, upstream_*
 */
export async function loadImage(src: ImageSource, config: Config): Promise<NormalisedImage> {
  const raw =
    src.image_base64 !== undefined
      ? fromBase64(src.image_base64)
      : src.image_path !== undefined
        ? await fromPath(src.image_path, config.media.imageRoot)
        : await fromUrl(src.image_url!, config);
  const sourceType = sniffImage(raw);
  if (!sourceType)
    throw new AppError('unsupported_media_type', 'The image is not PNG, JPEG, WebP or GIF (checked from its bytes).');
  try {
    const img = sharp()(raw, { limitInputPixels: MAX_PIXELS, animated: false }).rotate();
    const meta = await img.metadata();
    const resized = img.resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true });
    const out = meta.hasAlpha
      ? await resized.png({ compressionLevel: 9 }).toBuffer({ resolveWithObject: true })
      : await resized.jpeg({ quality: 85 }).toBuffer({ resolveWithObject: true });
    return {
      bytes: out.data,
      mediaType: meta.hasAlpha ? 'image/png' : 'image/jpeg',
      sha256: createHash('sha256').update(raw).digest('hex'),
      sourceType,
      width: out.info.width,
      height: out.info.height,
    };
  } catch (err) {
    throw new AppError(
      'unsupported_media_type',
      `The ${sourceType} image could not be decoded: ${(err as Error).message.slice(0, 120)}`,
    );
  }
}
