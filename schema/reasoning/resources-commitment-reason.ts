import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, surfaceField } from './common';

/** POST /v1/resources/commitment/reason: detect over-commitment and choose a feasible subset (plans only). */
export const resourcesCommitmentRequest = z.object({
  surface: surfaceField,
  now: dateTime.optional().describe('Current instant for past-due checks (never read from the server clock).'),
  timezone: z.string().max(64).optional(),
  resources: z
    .array(
      z.object({
        id: idText,
        kind: z.string().max(50).optional().describe('time | money | people | any label.'),
        capacity: z.number().min(0).max(1e12),
        unit: z.string().max(50).optional(),
        period_start: dateTime
          .optional()
          .describe('With period_end, capacity accrues evenly over the period (dated checks).'),
        period_end: dateTime.optional(),
      }),
    )
    .min(1)
    .max(1000),
  commitments: z
    .array(
      z.object({
        id: idText,
        title: shortText.optional(),
        priority: z.number().min(-1e6).max(1e6).optional().describe('Higher is more important (default 0).'),
        due: dateTime.optional(),
        must_keep: z.boolean().optional(),
        owner: shortText.optional(),
        demands: z
          .array(z.object({ resource_id: idText, amount: z.number().min(0).max(1e12) }))
          .max(50)
          .describe('What the commitment consumes.'),
      }),
    )
    .min(1)
    .max(MAX_ITEMS),
  preferences: z
    .object({ max_tradeoffs: capField(1000).describe('Cap on trade-offs listed (default 10).') })
    .optional(),
});

export const resourcesCommitmentResponse = z.object({
  surface: z.string().nullable(),
  utilization: z.array(
    z.object({
      resource_id: z.string(),
      kind: z.string().nullable(),
      capacity: z.number(),
      demanded: z.number(),
      utilization: z.number(),
      over_by: z.number(),
    }),
  ),
  over_commitment: z.object({
    over: z.boolean(),
    resource_ids: z.array(z.string()),
    by_date: z.array(
      z.object({
        resource_id: z.string(),
        commitment_id: z.string(),
        due: z.string(),
        cumulative_demand: z.number(),
        available_by_then: z.number(),
      }),
    ),
    past_due: z.array(z.string()),
  }),
  feasible_subset: z.object({
    kept: z.array(z.object({ commitment_id: z.string(), forced: z.boolean() })),
    deferred: z.array(z.object({ commitment_id: z.string(), blocking_resource_ids: z.array(z.string()) })),
    remaining: z.array(z.object({ resource_id: z.string(), amount: z.number() })),
  }),
  trade_offs: z.array(
    z.object({
      commitment_id: z.string(),
      kind: z
        .enum(['drop_commitments', 'add_capacity'])
        .describe('Drop kept commitments of no higher priority, or add capacity.'),
      drop_ids: z.array(z.string()),
      resource_changes: z.array(z.object({ resource_id: z.string(), amount: z.number() })),
      detail: z.string(),
    }),
  ),
  warnings: z.array(z.string()),
  integration_hints: z.array(integrationHint),
});

export type ResourcesCommitmentRequest = z.infer<typeof resourcesCommitmentRequest>;
export type ResourcesCommitmentResponse = z.infer<typeof resourcesCommitmentResponse>;
