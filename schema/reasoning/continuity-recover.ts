import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, stringList, surfaceField } from './common';

export const continuityRecoverRequest = z.object({
  surface: surfaceField,
  session_id: idText.optional(),
  intent: shortText.optional().describe('What the interrupted session was for.'),
  now: dateTime.optional().describe('Request clock; with left_at (or the last event time) gives the time away.'),
  timezone: z.string().max(64).optional(),
  left_at: dateTime.optional().describe('When the session was interrupted; default: time of the last event.'),
  away_minutes: z.number().int().min(0).max(525_600).optional().describe('Time away when no clock is sent.'),
  last_events: z
    .array(
      z.object({
        id: idText,
        kind: shortText.optional().describe('edit, view, run, message, decision, ...'),
        title: shortText.optional(),
        detail: z.string().max(2000).optional(),
        time: dateTime.optional(),
        status: shortText.optional(),
        item_id: idText.optional().describe('Open item the event worked on.'),
        surface: shortText.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .describe('Events of the interrupted session, any order.'),
  open_items: z
    .array(
      z.object({
        id: idText,
        title: shortText.optional(),
        kind: shortText.optional(),
        status: shortText.optional(),
        progress: z.number().min(0).max(1).optional(),
        next_step: shortText.optional(),
        depends_on: z.array(idText).max(100).optional(),
        updated_at: dateTime.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional(),
  changes_since: z
    .array(
      z.object({
        id: idText,
        title: shortText.optional(),
        kind: shortText.optional(),
        time: dateTime.optional(),
        actor: shortText.optional(),
        item_id: idText.optional(),
        summary: z.string().max(2000).optional(),
        tags: stringList(50).optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe('What happened elsewhere while the user was away.'),
  preferences: z
    .object({
      max_changes: capField(200).describe('Default 10.'),
      max_open_items: capField(200).describe('Default 10.'),
      max_steps: capField(20).describe('Cap on warm-up steps; default 4.'),
    })
    .optional(),
});

export const continuityRecoverResponse = z.object({
  where_you_left_off: z
    .object({
      event_id: z.string(),
      title: z.string(),
      time: z.string().nullable(),
      item_id: z.string().nullable(),
      last_action: z.string(),
      detail: z.string().nullable(),
    })
    .nullable(),
  time_away: z.object({
    minutes: z.number().nullable(),
    label: z.string(),
    basis: z.enum(['clock', 'away_minutes', 'unknown']),
    context_decay: z.enum(['fresh', 'warm', 'cold', 'unknown']),
  }),
  what_changed: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      time: z.string().nullable(),
      item_id: z.string().nullable(),
      impact: z.enum(['blocking', 'relevant', 'background']),
      reason: z.string(),
    }),
  ),
  open_items: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      status: z.string().nullable(),
      progress: z.number().nullable(),
      next_step: z.string().nullable(),
      ready: z.boolean(),
      blocked_by: z.array(z.string()),
      changed_while_away: z.boolean(),
      score: z.number(),
    }),
  ),
  first_reentry_action: z.object({
    kind: z.enum(['review_change', 'unblock', 'resume_item', 'restart_context', 'start_fresh']),
    target_id: z.string().nullable(),
    text: z.string(),
    estimated_minutes: z.number().int(),
  }),
  warm_up_steps: z.array(z.object({ order: z.number().int(), text: z.string(), target_id: z.string().nullable() })),
  recovery_brief: z.string(),
  integration_hints: z.array(integrationHint),
});

export type ContinuityRecoverRequest = z.output<typeof continuityRecoverRequest>;
export type ContinuityRecoverResponse = z.input<typeof continuityRecoverResponse>;
