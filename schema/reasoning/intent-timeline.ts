import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, surfaceField } from './common';

export const intentTimelineRequest = z.object({
  surface: surfaceField,
  goal_intent: shortText
    .optional()
    .describe('Intent the session should serve; drift is measured against it (default: the dominant intent).'),
  timezone: z.string().max(64).optional(),
  events: z
    .array(
      z.object({
        id: idText,
        time: dateTime.describe('ISO date-time; events with unreadable times are listed in unplaced_event_ids.'),
        intent: shortText.optional().describe('Intent label; inferred from text when absent.'),
        text: z.string().max(2000).optional(),
        actor: shortText.optional(),
        surface: shortText.optional(),
        confidence: z.number().min(0).max(1).optional(),
      }),
    )
    .max(MAX_ITEMS)
    .describe('Events in any order.'),
  preferences: z
    .object({
      max_phases: capField(500).describe('Most recent phases kept; default 20.'),
      gap_minutes: z
        .number()
        .int()
        .min(1)
        .max(10_080)
        .optional()
        .describe('A longer silence closes a phase; default 30.'),
      tail_minutes: z
        .number()
        .int()
        .min(0)
        .max(240)
        .optional()
        .describe('Dwell credited to the last event of a phase; default 5.'),
    })
    .optional(),
});

export const intentTimelineResponse = z.object({
  phases: z.array(
    z.object({
      id: z.string(),
      intent: z.string(),
      start: z.string(),
      end: z.string(),
      dwell_minutes: z.number(),
      event_count: z.number().int(),
      event_ids: z.array(z.string()),
      surfaces: z.array(z.string()),
      confidence: z.number(),
      inferred_share: z.number().describe('Share of events whose intent was inferred from text.'),
    }),
  ),
  transitions: z.array(
    z.object({
      from_phase: z.string(),
      to_phase: z.string(),
      from_intent: z.string(),
      to_intent: z.string(),
      gap_minutes: z.number(),
      kind: z.enum(['switch', 'return', 'gap_resume']),
    }),
  ),
  dwell_by_intent: z.array(
    z.object({ intent: z.string(), minutes: z.number(), share: z.number(), phases: z.number().int() }),
  ),
  drift: z.object({
    goal_intent: z.string().nullable(),
    basis: z.enum(['given', 'dominant', 'none']),
    on_goal_share: z.number(),
    drift_score: z.number(),
    trend: z.enum(['converging', 'drifting', 'stable', 'unknown']),
    fragmentation_per_hour: z.number(),
    off_goal_phase_ids: z.array(z.string()),
  }),
  unplaced_event_ids: z.array(z.string()),
  summary: z.object({
    events: z.number().int(),
    phases_total: z.number().int(),
    start: z.string().nullable(),
    end: z.string().nullable(),
    span_minutes: z.number(),
  }),
  integration_hints: z.array(integrationHint),
});

export type IntentTimelineRequest = z.output<typeof intentTimelineRequest>;
export type IntentTimelineResponse = z.input<typeof intentTimelineResponse>;
