import { z } from 'zod';

const positive = z.number().int().positive();

/** A key's or tenant's limits; absent = no limit on that dimension. */
export const Limits = z
  .object({
    requests_per_minute: positive.optional(),
    tokens_per_minute: positive.optional(),
    tokens_per_day: positive.optional(),
    tokens_per_month: positive.optional(),
  })
  .meta({ id: 'Limits' });

export const KeyLimits = z.object({ key: Limits.nullable(), tenant: Limits.nullable() }).meta({
  id: 'KeyLimits',
  description: "The calling key's limits and its tenant's (set with `npm run -s keys -- limits`).",
});

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => !Number.isNaN(Date.parse(s)), 'not a valid date');

export const UsageQuery = z.object({
  from: day.optional(),
  to: day.optional(),
  group_by: z.enum(['key', 'lane', 'day']).default('day'),
});

/** One group of a usage report; also the row shape the usage query reads. */
export const UsageRow = z.object({
  group: z.string(),
  requests: z.number(),
  errors: z.number(),
  tokens_in: z.number(),
  tokens_out: z.number(),
  /** Requests whose token counts are our estimate (the upstream reported none). */
  estimated_requests: z.number(),
});
export type UsageRow = z.infer<typeof UsageRow>;

export const UsageReport = z
  .object({
    object: z.literal('usage'),
    from: z.string(),
    to: z.string(),
    group_by: z.enum(['key', 'lane', 'day']),
    data: z.array(UsageRow),
  })
  .meta({ id: 'UsageReport' });

export const KeyRevoked = z.object({ key_id: z.string(), revoked: z.literal(true) }).meta({ id: 'KeyRevoked' });
