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

/** A whole number in a form field (sent as text). */
const formInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** OpenAI's `CreateImageEditRequest` text fields (the files, `image`/`image[]` and `mask`, are read beside them). */
export const ImageEditForm = z
  .object({
    prompt: z.string().min(1).max(32000),
    n: formInt(1, 10).optional(),
    size: z
      .string()
      .regex(/^(auto|\d{2,4}x\d{2,4})$/, 'auto or WIDTHxHEIGHT, e.g. 1024x1024')
      .optional(),
    quality: z.enum(['standard', 'low', 'medium', 'high', 'auto', 'hd']).optional(),
    background: z.enum(['transparent', 'opaque', 'auto']).optional(),
    output_format: z.enum(['png', 'jpeg', 'webp']).optional(),
    response_format: z
      .enum(['url', 'b64_json'])
      .optional()
      .describe('url (default): a link served by this service, valid for SVC_IMAGE_URL_TTL_SECONDS.'),
    model: z.string().max(100).optional().describe('Accepted for compatibility; the images lane decides the model.'),
    user: z.string().max(256).optional(),
    input_fidelity: z.enum(['high', 'low']).optional().describe('Accepted; not passed on.'),
    output_compression: formInt(0, 100).optional().describe('Accepted; not passed on.'),
    stream: z.enum(['false'], { error: 'streamed image edits are not offered here: leave stream out' }).optional(),
    partial_images: formInt(0, 3).optional().describe('Accepted (streaming is not offered).'),
  })
  .meta({ id: 'CreateImageEditRequest' });

/** OpenAI's `CreateImageVariationRequest` text fields (the file, `image`, is read beside them). */
export const ImageVariationForm = z
  .object({
    n: formInt(1, 10).optional(),
    size: z.enum(['256x256', '512x512', '1024x1024']).optional(),
    response_format: z.enum(['url', 'b64_json']).optional(),
    model: z.string().max(100).optional().describe('Accepted for compatibility; the images lane decides the model.'),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'CreateImageVariationRequest' });
