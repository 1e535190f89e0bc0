import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, stringList, surfaceField } from './common';

export const signalsOpportunitiesRequest = z.object({
  surface: surfaceField,
  focus: shortText.optional().describe('Goal or theme to favour (clusters sharing its words score higher).'),
  now: dateTime.optional().describe('Clock for recency; default: the newest signal time.'),
  timezone: z.string().max(64).optional(),
  signals: z
    .array(
      z.object({
        id: idText,
        kind: shortText.optional().describe('e.g. feature_request, complaint, mention, lead, churn_risk, usage_spike.'),
        text: z.string().max(2000).optional(),
        strength: z.number().min(0).max(1).optional().describe('0..1, default 0.5.'),
        time: dateTime.optional(),
        tags: stringList(50).optional(),
        source: shortText.optional(),
        entity: shortText.optional().describe('Customer, account or person the signal is about.'),
      }),
    )
    .max(MAX_ITEMS)
    .describe('Signals to cluster.'),
  preferences: z
    .object({
      max_opportunities: capField(100).describe('Default 5.'),
      min_signals: z.number().int().min(1).max(100).optional().describe('Signals needed for a cluster; default 2.'),
      half_life_hours: z.number().min(1).max(8760).optional().describe('Recency half-life; default 72.'),
    })
    .optional(),
});

export const signalsOpportunitiesResponse = z.object({
  opportunities: z.array(
    z.object({
      id: z.string(),
      label: z.string(),
      terms: z.array(z.string()),
      score: z.number(),
      factors: z.object({
        frequency: z.number(),
        recency: z.number(),
        strength: z.number(),
        diversity: z.number(),
        focus: z.number(),
      }),
      signal_count: z.number().int(),
      evidence_signal_ids: z.array(z.string()),
      entities: z.array(z.string()),
      kinds: z.array(z.string()),
      first_seen: z.string().nullable(),
      last_seen: z.string().nullable(),
      momentum: z.enum(['rising', 'steady', 'fading', 'unknown']),
      suggested_move: z.string(),
    }),
  ),
  unclustered_signal_ids: z.array(z.string()),
  summary: z.object({
    signals: z.number().int(),
    clusters: z.number().int(),
    clustered_signals: z.number().int(),
    clock: z.string().nullable(),
  }),
  integration_hints: z.array(integrationHint),
});

export type SignalsOpportunitiesRequest = z.output<typeof signalsOpportunitiesRequest>;
export type SignalsOpportunitiesResponse = z.input<typeof signalsOpportunitiesResponse>;
