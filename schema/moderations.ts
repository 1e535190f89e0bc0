import { z } from 'zod';
import { ImageUrl, MAX_IMAGES, MAX_MESSAGE_CHARS } from './chat';

/** The public id of the moderation model (the upstream's model is deployment configuration, SVC_MODERATION_MODEL). */
export const MODERATION_MODEL = 'svc-moderation';
/** Texts one request may classify. */
export const MAX_MODERATION_INPUTS = 256;

const Text = z.string().max(MAX_MESSAGE_CHARS);
const Part = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('text'), text: Text }),
    z.object({ type: z.literal('image_url'), image_url: z.object({ url: ImageUrl }) }),
  ],
  { error: 'a part {type: "text", text} or {type: "image_url", image_url: {url}}' },
);

export const CreateModerationRequest = z
  .object({
    input: z
      .union(
        [
          Text,
          z.array(Text).min(1).max(MAX_MODERATION_INPUTS),
          z
            .array(Part)
            .min(1)
            .max(MAX_MODERATION_INPUTS)
            .refine((parts) => parts.filter((p) => p.type === 'image_url').length <= MAX_IMAGES, {
              message: `at most ${MAX_IMAGES} images`,
            }),
        ],
        { error: 'a text, an array of texts, or an array of text and image_url parts' },
      )
      .describe(
        'A text, texts (a result each), or text and image parts (one result; images are loaded as chat loads them).',
      ),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(`'${MODERATION_MODEL}' (the default) or the configured upstream model's name (SVC_MODERATION_MODEL).`),
  })
  .meta({ id: 'CreateModerationRequest' });
export type CreateModerationRequest = z.output<typeof CreateModerationRequest>;

export const ModerationResponse = z
  .object({
    id: z.string(),
    model: z.string(),
    results: z.array(
      z
        .object({
          flagged: z.boolean(),
          categories: z.record(z.string(), z.boolean()),
          category_scores: z.record(z.string(), z.number()),
        })
        .passthrough(),
    ),
  })
  .meta({ id: 'ModerationResponse' });
