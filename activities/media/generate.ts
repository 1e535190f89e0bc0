import { z } from 'zod';
import { AppError } from '../../schema/errors';
import type { Config } from '../../schema/config';
import { faultFromNetwork, faultFromStatus, timeoutFault } from '../providers/errors';
import { MAX_IMAGE_BYTES, sniffImage, type ImageType } from './image-input';
import { loadMediaLanes } from './media-lanes';

const TIMEOUT_MS = 120_000;
const Upstream = z.object({
  data: z.array(z.object({ b64_json: z.string().min(1), revised_prompt: z.string().optional() })).min(1),
});

export interface GeneratedImage {
  bytes: Buffer;
  contentType: ImageType;
  revisedPrompt?: string;
}

/** The lane's limits, checked before any call: `n` and `size` name the field when out of range. */
export function checkImageRequest(config: Config, n: number, size: string | undefined) {
  const lane = loadMediaLanes(config).images;
  if (!lane)
    throw new AppError(
      'service_unavailable',
      'No image provider is configured: set OPENAI_BASE_URL or a provider (and optionally media.images) in SVC_CONFIG.',
    );
  if (n > lane.maxN)
    throw new AppError('invalid_request', `n must be at most ${lane.maxN} for this image lane.`, {
      details: [{ path: 'body.n', message: `at most ${lane.maxN}` }],
    });
  if (size !== undefined && size !== 'auto' && !lane.sizes.includes(size)) {
    throw new AppError('invalid_request', `size must be one of ${lane.sizes.join(', ')} for this image lane.`, {
      details: [{ path: 'body.size', message: `one of ${lane.sizes.join(', ')}` }],
    });
  }
  return lane;
}

/**
 * Calls the images lane (OpenAI `POST /images/generations`, always asking for b64_json so that no
 * provider URL is ever fetched) and checks that every answer is an image (by its bytes).
 * @throws AppError upstream_error / upstream_timeout / rate_limited / service_unavailable
 */
export async function generateImages(
  config: Config,
  req: { prompt: string; n: number; size?: string; quality?: string; style?: string; background?: string },
  /** Ends the provider's call early (the client left, the run was cancelled). */
  signal?: AbortSignal,
): Promise<GeneratedImage[]> {
  const lane = checkImageRequest(config, req.n, req.size);
  const body = {
    model: lane.model,
    prompt: req.prompt,
    n: req.n,
    response_format: 'b64_json',
    ...(req.size && req.size !== 'auto' ? { size: req.size } : {}),
    ...(req.quality ? { quality: req.quality } : {}),
    ...(req.style ? { style: req.style } : {}),
    ...(req.background ? { background: req.background } : {}),
  };
  return callImages(lane, 'generations', JSON.stringify(body), req.n, signal);
}

/** An image sent to the provider as a form file. */
export interface ImageFile {
  bytes: Buffer;
  contentType: ImageType;
}

const extension = (t: ImageType) => t.slice('image/'.length).replace('jpeg', 'jpg');
const formFile = (f: ImageFile) => new Blob([new Uint8Array(f.bytes)], { type: f.contentType });

/**
 * Edits images with the images lane (OpenAI `POST /images/edits`, multipart: the image, or several as `image[]`, an
 * optional mask, the prompt), b64_json asked for as for generations.
 * @throws AppError as generateImages
 */
export async function editImages(
  config: Config,
  req: {
    images: ImageFile[];
    mask?: ImageFile;
    prompt: string;
    n: number;
    size?: string;
    quality?: string;
    background?: string;
    outputFormat?: string;
  },
  /** Ends the provider's call early (the client left, the run was cancelled). */
  signal?: AbortSignal,
): Promise<GeneratedImage[]> {
  const lane = checkImageLane(config, req.n);
  const form = new FormData();
  const field = req.images.length > 1 ? 'image[]' : 'image';
  req.images.forEach((f, i) => form.append(field, formFile(f), `image-${i + 1}.${extension(f.contentType)}`));
  if (req.mask) form.append('mask', formFile(req.mask), 'mask.png');
  form.append('model', lane.model);
  form.append('prompt', req.prompt);
  form.append('n', String(req.n));
  form.append('response_format', 'b64_json');
  if (req.size && req.size !== 'auto') form.append('size', req.size);
  if (req.quality) form.append('quality', req.quality);
  if (req.background) form.append('background', req.background);
  if (req.outputFormat) form.append('output_format', req.outputFormat);
  return callImages(lane, 'edits', form, req.n, signal);
}

/**
 * Variations of an image with the images lane (OpenAI `POST /images/variations`, multipart), b64_json asked for.
 * @throws AppError as generateImages
 */
export async function imageVariations(
  config: Config,
  req: { image: ImageFile; n: number; size?: string },
): Promise<GeneratedImage[]> {
  const lane = checkImageLane(config, req.n);
  const form = new FormData();
  form.append('image', formFile(req.image), `image.${extension(req.image.contentType)}`);
  form.append('model', lane.model);
  form.append('n', String(req.n));
  form.append('response_format', 'b64_json');
  if (req.size && req.size !== 'auto') form.append('size', req.size);
  return callImages(lane, 'variations', form, req.n);
}

/** The images lane when configured and `n` within its limit (edits and variations take the sizes the provider takes). */
function checkImageLane(config: Config, n: number) {
  return checkImageRequest(config, n, undefined);
}

/** Posts to the provider's `/images/<kind>` and reads the images it answers (each checked to be one by its bytes). */
async function callImages(
  lane: NonNullable<ReturnType<typeof loadMediaLanes>['images']>,
  kind: 'generations' | 'edits' | 'variations',
  body: string | FormData,
  n: number,
  signal?: AbortSignal,
): Promise<GeneratedImage[]> {
  const p = lane.provider;
  // A form sets its own content type (with the boundary).
  const headers: Record<string, string> = {
    ...p.headers,
    ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
  };
  if (p.apiKey) headers.authorization = `Bearer ${p.apiKey}`;
  const limit = Math.min(p.timeoutMs, TIMEOUT_MS);
  let text: string;
  try {
    const res = await fetch(`${p.baseUrl.replace(/\/+$/, '')}/images/${kind}`, {
      method: 'POST',
      headers,
      body,
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(limit)]) : AbortSignal.timeout(limit),
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw faultFromStatus(p.name, res.status, res.headers.get('retry-after'));
    }
    text = await res.text();
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (signal?.aborted) throw err;
    if ((err as Error).name === 'TimeoutError') throw timeoutFault(p.name, limit);
    throw faultFromNetwork(p.name, err, false);
  }
  const bad = () => new AppError('upstream_error', `The image provider '${p.name}' answered without usable images.`);
  let parsed: z.infer<typeof Upstream>;
  try {
    parsed = Upstream.parse(JSON.parse(text));
  } catch {
    throw bad();
  }
  return parsed.data.slice(0, n).map((d) => {
    const bytes = Buffer.from(d.b64_json, 'base64');
    const contentType = sniffImage(bytes);
    if (!contentType || bytes.length > MAX_IMAGE_BYTES) throw bad();
    return { bytes, contentType, revisedPrompt: d.revised_prompt };
  });
}
