import { z } from 'zod';
import {
  MAX_ITEMS,
  capField,
  dateTime,
  idText,
  integrationHint,
  longText,
  shortText,
  stringList,
  surfaceField,
} from './common';

/** POST /v1/anticipation/prepare (path-only in the spec; shape designed here). */
export const upcomingEvent = z.object({
  id: idText,
  title: shortText.min(1),
  start: dateTime.describe('ISO date-time; read in `timezone` when it has no offset.'),
  end: dateTime.optional(),
  kind: shortText.optional().describe('meeting, interview, presentation, deadline, travel, call, ...'),
  importance: shortText.optional().describe('low, medium, high, critical (or 1-5)'),
  attendees: stringList(100).optional(),
  location: shortText.optional(),
  prep_minutes: z
    .number()
    .int()
    .min(0)
    .max(24 * 60)
    .optional(),
  tags: stringList(50).optional(),
  notes: longText.optional(),
});

export const contextItem = z.object({
  id: idText,
  title: shortText.min(1),
  content: longText.optional(),
  tags: stringList(50).optional(),
  kind: shortText.optional(),
  project: shortText.optional(),
});

export const anticipationPrepareRequest = z.object({
  surface: surfaceField,
  now: dateTime.describe('Current date-time: lead times are measured from it (the compiler never reads a clock).'),
  timezone: z.string().max(64).optional(),
  events: z.array(upcomingEvent).min(1).max(MAX_ITEMS).describe('Upcoming events and commitments.'),
  context_items: z
    .array(contextItem)
    .max(MAX_ITEMS)
    .default([])
    .describe('Notes, documents and threads to attach to preparation.'),
  preferences: z
    .object({
      max_packets: capField(500).describe('At most this many preparation packets (default 5).'),
      horizon_hours: z
        .number()
        .int()
        .min(1)
        .max(24 * 90)
        .optional()
        .describe('Look-ahead window (default 72 hours).'),
      max_items_per_packet: capField(50),
    })
    .default({}),
});
export type AnticipationPrepareRequest = z.output<typeof anticipationPrepareRequest>;

export const anticipationPrepareResponse = z.object({
  packets: z.array(
    z.object({
      id: z.string(),
      event_id: z.string(),
      title: z.string(),
      starts_at: z.string(),
      lead_minutes: z.number().int(),
      prep_minutes: z.number().int(),
      prepare_by: z.string(),
      urgency: z.enum(['now', 'today', 'upcoming']),
      score: z.number(),
      factors: z.array(z.object({ name: z.string(), value: z.number() })),
      checklist: z.array(z.string()),
      context_item_ids: z.array(z.string()),
      open_questions: z.array(z.string()),
    }),
  ),
  conflicts: z.array(z.object({ event_ids: z.array(z.string()), overlap_minutes: z.number().int() })),
  skipped: z.array(
    z.object({
      event_id: z.string(),
      reason: z.enum(['unparseable_start', 'already_started', 'beyond_horizon', 'over_packet_cap']),
    }),
  ),
  now: z.string().nullable().describe('The `now` the plan was computed against (normalised), null if unparseable.'),
  integration_hints: z.array(integrationHint),
});
export type AnticipationPrepareResponse = z.input<typeof anticipationPrepareResponse>;
