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
  req: { prompt: string; n: number; size?: string; quality?: string; style?: string },
): Promise<GeneratedImage[]> {
  const lane = checkImageRequest(config, req.n, req.size);
  const p = lane.provider;
  const headers: Record<string, string> = { ...p.headers, 'content-type': 'application/json' };
  if (p.apiKey) headers.authorization = `Bearer ${p.apiKey}`;
  const limit = Math.min(p.timeoutMs, TIMEOUT_MS);
  const body = {
    model: lane.model,
    prompt: req.prompt,
    n: req.n,
    response_format: 'b64_json',
    ...(req.size && req.size !== 'auto' ? { size: req.size } : {}),
    ...(req.quality ? { quality: req.quality } : {}),
    ...(req.style ? { style: req.style } : {}),
  };
  let text: string;
  try {
    const res = await fetch(`${p.baseUrl.replace(/\/+$/, '')}/images/generations`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(limit),
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw faultFromStatus(p.name, res.status, res.headers.get('retry-after'));
    }
    text = await res.text();
  } catch (err) {
    if (err instanceof AppError) throw err;
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
  return parsed.data.slice(0, req.n).map((d) => {
    const bytes = Buffer.from(d.b64_json, 'base64');
    const contentType = sniffImage(bytes);
    if (!contentType || bytes.length > MAX_IMAGE_BYTES) throw bad();
    return { bytes, contentType, revisedPrompt: d.revised_prompt };
  });
}
