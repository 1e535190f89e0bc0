import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { z } from 'zod';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { Target } from '../providers/openai-client';
import { ENV_PROVIDER, loadProviderSetup } from '../providers/provider-config';

/**
 * The `media` section of SVC_CONFIG (the model file's schema is loose, so the section sits beside
 * `providers` and `lanes`):
 *   media:
 *     vision: { provider: local, model: llava }
 *     images: { provider: default, model: dall-e-3, sizes: [1024x1024], max_n: 1 }
 * Without it, both lanes use the default provider with OpenAI's model names.
 */
const LaneSpec = z.object({ provider: z.string().min(1).optional(), model: z.string().min(1).optional() });
export const MediaConfigFile = z
  .object({
    vision: LaneSpec.optional(),
    images: LaneSpec.extend({
      sizes: z
        .array(z.string().regex(/^\d{2,4}x\d{2,4}$/))
        .min(1)
        .optional(),
      max_n: z.number().int().min(1).max(10).optional(),
    }).optional(),
  })
  .default({});

export interface MediaLanes {
  vision: Target | null;
  images: (Target & { sizes: string[]; maxN: number }) | null;
}

/** The public model name answered for the vision lane (upstream model ids are never shown). */
export const VISION_MODEL = 'svc-vision';

function readMediaSection(file: string | undefined): z.infer<typeof MediaConfigFile> {
  if (!file) return {};
  const parsed = MediaConfigFile.safeParse((YAML.parse(readFileSync(file, 'utf8')) ?? {}).media);
  if (!parsed.success)
    throw new Error(
      `SVC_CONFIG media section is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** The lanes of each Config, resolved once (as the chat lanes are, when the model router is built). */
const resolved = new WeakMap<Config, MediaLanes>();

/**
 * Resolves the vision and images lanes to provider targets: read once per Config (a configuration that cannot be read
 * is read again on the next call).
 * @throws AppError service_unavailable when the configuration cannot be read (detail logged by the caller)
 */
export function loadMediaLanes(config: Config): MediaLanes {
  let lanes = resolved.get(config);
  if (!lanes) resolved.set(config, (lanes = readMediaLanes(config)));
  return lanes;
}

function readMediaLanes(config: Config): MediaLanes {
  let setup: ReturnType<typeof loadProviderSetup>;
  let media: z.infer<typeof MediaConfigFile>;
  try {
    setup = loadProviderSetup(config);
    media = readMediaSection(config.configFile);
  } catch (err) {
    throw new AppError('service_unavailable', 'The provider configuration is invalid; see the service log.', {
      cause: err,
    });
  }
  const fallback = setup.providers.has(ENV_PROVIDER) ? ENV_PROVIDER : [...setup.providers.keys()][0];
  const target = (spec: { provider?: string; model?: string } | undefined, defaultModel: string): Target | null => {
    const p = setup.providers.get(spec?.provider ?? fallback ?? '');
    return p ? { provider: p, model: spec?.model ?? defaultModel } : null;
  };
  const images = target(media.images, 'dall-e-3');
  return {
    vision: target(media.vision, 'gpt-4o'),
    images: images
      ? {
          ...images,
          sizes: media.images?.sizes ?? ['1024x1024', '1792x1024', '1024x1792'],
          maxN: media.images?.max_n ?? 1,
        }
      : null,
  };
}
