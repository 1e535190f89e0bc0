import { z } from 'zod';

/**
 * A query parameter given empty (`?surface=`) counts as absent: forms and client libraries send
 * empty values for unset filters, and "no filter" is what they mean.
 */
export const blankAsAbsent = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema);
