import { z } from 'zod';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { parseStorableJson } from '../../schema/storable';
import { VisionAnswer } from '../../schema/vision';
import { completeOnce } from '../providers/openai-client';
import type { ChatMessageIn } from '../providers/types';
import type { NormalisedImage } from './image-input';
import { loadMediaLanes, VISION_MODEL } from './media-lanes';

const TIMEOUT_MS = 60_000;
const SYSTEM =
  'You describe images. Answer with JSON only: {"description": string, "tags": string[]} (a few short lower-case tags).';

/**
 * Asks the vision lane about one normalised image (an OpenAI-compatible multimodal message with
 * the bytes as a data URL: the provider never fetches anything) and parses the answer.
 * @throws AppError service_unavailable (no lane), upstream_error / upstream_timeout / rate_limited
 */
export async function describeImage(
  config: Config,
  img: NormalisedImage,
  prompt: string | undefined,
  signal?: AbortSignal,
) {
  const target = loadMediaLanes(config).vision;
  if (!target)
    throw new AppError(
      'service_unavailable',
      'No vision provider is configured: set OPENAI_BASE_URL or a provider (and optionally media.vision) in SVC_CONFIG.',
    );
  const messages = [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        { type: 'text', text: prompt ?? 'Describe this image.' },
        { type: 'image_url', image_url: { url: `data:${img.mediaType};base64,${img.bytes.toString('base64')}` } },
      ],
    },
  ] as unknown as ChatMessageIn[];
  const res = await completeOnce(
    target,
    {
      lane: VISION_MODEL,
      messages,
      signal,
      timeoutMs: TIMEOUT_MS,
      extra: {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'vision_answer', strict: true, schema: z.toJSONSchema(VisionAnswer) },
        },
      },
    },
    TIMEOUT_MS,
  );
  const json = /\{[\s\S]*\}/.exec(res.content)?.[0];
  let parsed: z.infer<typeof VisionAnswer> | undefined;
  try {
    parsed = json ? VisionAnswer.parse(parseStorableJson(json)) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed)
    throw new AppError(
      'upstream_error',
      `The vision provider '${target.provider.name}' answered without the expected JSON (description, tags).`,
    );
  return { description: parsed.description, tags: parsed.tags, model: VISION_MODEL };
}
