import { z } from 'zod';

/**
 * A query parameter given empty (`?surface=`) counts as absent: forms and client libraries send
 * empty values for unset filters, and "no filter" is what they mean.
 */
export const blankAsAbsent = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema);

/** `wait_s` of the routes that start a job and may answer with its result: up to 60 s, default 0 (202 at once). */
export const waitSeconds = (description: string) => z.number().int().min(0).max(60).default(0).describe(description);

/** OpenAI's cursor list of `item` (files, batches, stored completions, items), documented under `id`. */
export const cursorListOf = <T extends z.ZodType>(item: T, id: string) =>
  z
    .object({
      object: z.literal('list'),
      data: z.array(item),
      first_id: z.string().nullable(),
      last_id: z.string().nullable(),
      has_more: z.boolean(),
    })
    .meta({ id });
