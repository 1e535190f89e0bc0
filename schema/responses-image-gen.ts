import { z } from 'zod';
import { MAX_MESSAGE_CHARS } from './chat';
import { readableText } from './storable';

/**
 * OpenAI's image_generation tool of the Responses API: the model asks for an image by writing a prompt, and this
 * service makes it with the images lane (as POST /v1/images/generations does) before the model answers on. Field names
 * and values follow OpenAI's published contract (`ImageGenTool`, `ImageGenToolCall`).
 */

/** The function name the lane knows the tool by (OpenAI's tool type). */
export const IMAGE_GENERATION = 'image_generation';

/** A generated image's base64 as an item holds it (an image of a few MB; the request's body limit bounds it too). */
const MAX_IMAGE_RESULT_CHARS = 33_554_432;

/** A mask's base64 (a PNG of up to 10 MB). */
const MAX_MASK_CHARS = 14_000_000;

export const ImageGenerationTool = z
  .object({
    type: z.literal('image_generation'),
    /** OpenAI's image model names: accepted; the images lane's model makes the image. */
    model: z.string().min(1).max(100).nullish(),
    quality: z.enum(['low', 'medium', 'high', 'auto']).nullish(),
    size: z
      .string()
      .regex(/^(auto|[1-9][0-9]{1,4}x[1-9][0-9]{1,4})$/, 'auto or WIDTHxHEIGHT')
      .nullish(),
    output_format: z.enum(['png', 'webp', 'jpeg']).nullish(),
    output_compression: z.number().int().min(0).max(100).nullish(),
    moderation: z.enum(['auto', 'low']).nullish(),
    background: z.enum(['transparent', 'opaque', 'auto']).nullish(),
    input_fidelity: z.enum(['high', 'low']).nullish(),
    input_image_mask: z
      .object({
        image_url: z.string().min(1).max(MAX_MASK_CHARS).nullish(),
        file_id: z.string().min(1).max(200).nullish(),
      })
      .strict()
      .refine((m) => (m.image_url == null) !== (m.file_id == null), 'send one of image_url and file_id')
      .nullish(),
    partial_images: z.number().int().min(0).max(3).nullish(),
    action: z.enum(['generate', 'edit', 'auto']).nullish(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.input_image_mask != null && t.action === 'generate')
      ctx.addIssue({
        code: 'custom',
        path: ['input_image_mask'],
        message: 'a mask is for edits, and action generate makes new images only',
      });
    if (t.background === 'transparent' && t.output_format === 'jpeg')
      ctx.addIssue({
        code: 'custom',
        path: ['output_format'],
        message: 'a transparent background needs png or webp (jpeg has no transparency)',
      });
  });
export type ImageGenerationTool = z.output<typeof ImageGenerationTool>;

/** An image generation call an earlier response made, as a client sends it back (its image is read only to edit it). */
export const ImageGenerationCallItem = z.object({
  type: z.literal('image_generation_call'),
  id: z.string().min(1).max(200),
  status: z.enum(['in_progress', 'completed', 'generating', 'failed']).nullish(),
  result: z.string().max(MAX_IMAGE_RESULT_CHARS).nullish(),
  revised_prompt: z.string().max(MAX_MESSAGE_CHARS).transform(readableText).nullish(),
  size: z.string().max(20).nullish(),
  quality: z.string().max(20).nullish(),
  background: z.string().max(20).nullish(),
  output_format: z.string().max(20).nullish(),
});
