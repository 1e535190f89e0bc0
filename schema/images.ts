import { z } from 'zod';

/** OpenAI `CreateImageRequest` (the fields this service acts on; nullable as in the contract). */
export const ImageGenerateBody = z
  .object({
    prompt: z.string().min(1).max(32000),
    model: z
      .string()
      .min(1)
      .max(100)
      .nullish()
      .describe('Accepted for compatibility; the images lane decides the upstream model.'),
    n: z.number().int().min(1).max(10).nullish(),
    quality: z.enum(['standard', 'hd', 'low', 'medium', 'high', 'auto']).nullish(),
    response_format: z
      .enum(['url', 'b64_json'])
      .nullish()
      .describe('url (default): a link served by this service, valid for SVC_IMAGE_URL_TTL_SECONDS.'),
    size: z.string().max(20).nullish(),
    style: z.enum(['vivid', 'natural']).nullish(),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'CreateImageRequest' });

/** OpenAI `ImagesResponse`. */
export const ImagesResponse = z
  .object({
    created: z.number().int(),
    data: z.array(
      z.object({ b64_json: z.string().optional(), url: z.url().optional(), revised_prompt: z.string().optional() }),
    ),
  })
  .meta({ id: 'ImagesResponse' });
