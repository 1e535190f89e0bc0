import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, stringList, surfaceField } from './common';
import { suggestionContext } from './ambient-intent-suggest';

export const continuityEvent = z.object({
  id: idText,
  kind: shortText.optional().describe('e.g. edit, view, message, meeting, commit, pause, complete.'),
  title: shortText.optional(),
  project: shortText.optional(),
  status: shortText.optional().describe('active, paused, open, waiting, blocked, done, ...'),
  source: shortText.optional().describe('Surface or app the event came from.'),
  time: dateTime.optional(),
  summary: z.string().max(2000).optional(),
  signals: stringList(50).optional(),
  recurrence: shortText.optional().describe('daily, weekly, weekdays, ... for recurring events.'),
  item_id: idText.optional().describe('Work item the event belongs to (otherwise matched by title).'),
});

export const ambientContinuityCompileRequest = z.object({
  surface: surfaceField,
  profile: shortText.optional(),
  active_goal: shortText.optional(),
  active_project: shortText.optional(),
  now: dateTime.optional().describe('Request clock; without it the latest event time is used.'),
  timezone: z.string().max(64).optional(),
  recent_events: z
    .array(continuityEvent)
    .max(MAX_ITEMS)
    .default([])
    .describe('Recent cross-surface events (default none).'),
  work_items: z
    .array(
      z.object({
        id: idText,
        kind: shortText.optional(),
        title: shortText.optional(),
        project: shortText.optional(),
        status: shortText.optional(),
        source: shortText.optional(),
        updated_at: dateTime.optional(),
        due: dateTime.optional(),
        importance: z.number().min(0).max(1).optional(),
        tags: stringList(50).optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional(),
  temporal_commitments: z
    .array(
      z.object({
        id: idText.describe('Commitment or block id (e.g. a schedule_proposals block_id).'),
        title: shortText.optional(),
        task_id: idText.optional(),
        start: dateTime.optional(),
        end: dateTime.optional(),
        due: dateTime.optional(),
        status: shortText.optional(),
        owner: shortText.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe('Scheduled blocks / commitments, e.g. from /temporal/coordinate.'),
  previous_ledger: z
    .object({
      compiled_at: dateTime.optional(),
      entries: z
        .array(
          z.object({
            id: idText,
            title: shortText.nullish(),
            state: shortText.nullish(),
            last_seen: dateTime.nullish(),
            touches: z.number().int().min(0).max(1_000_000_000).optional(),
            surfaces: stringList(20).optional(),
          }),
        )
        .max(MAX_ITEMS)
        .optional(),
      cooldowns: z
        .array(z.object({ key: idText, until: dateTime, reason: shortText.optional() }))
        .max(MAX_ITEMS)
        .optional(),
    })
    .optional()
    .describe('The ledger returned by the previous compile (carries touches and cooldowns forward).'),
  preferences: z
    .object({
      max_entries: capField(1000).describe('Cap on ledger entries; default 50.'),
      max_events: capField(200).describe('Cap on recent_events in the output; default 10.'),
      max_candidates: capField(200).describe('Cap on suggestion_context candidates; default 20.'),
      stale_after_hours: z
        .number()
        .min(1)
        .max(8760)
        .optional()
        .describe('Untouched open work becomes paused after this; default 48.'),
      cooldown_minutes: z.number().int().min(0).max(10_080).optional().describe('Default 90.'),
    })
    .optional(),
});

const entryState = z.enum(['active', 'paused', 'open_loop', 'commitment', 'overdue', 'done']);

export const ambientContinuityCompileResponse = z.object({
  ledger: z.object({
    compiled_at: z.string().nullable(),
    entries: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        kind: z.string().nullable(),
        project: z.string().nullable(),
        state: entryState,
        last_seen: z.string().nullable(),
        touches: z.number().int(),
        surfaces: z.array(z.string()),
        event_ids: z.array(z.string()),
        carried_over: z.boolean(),
      }),
    ),
    dropped: z.number().int(),
  }),
  paused_work: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      paused_since: z.string().nullable(),
      reason: z.string(),
      resume_hint: z.string(),
    }),
  ),
  open_loops: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      reason: z.string(),
      event_ids: z.array(z.string()),
      age_hours: z.number().nullable(),
    }),
  ),
  commitments: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      when: z.string().nullable(),
      status: z.enum(['upcoming', 'in_progress', 'overdue', 'done', 'unscheduled']),
      task_id: z.string().nullable(),
    }),
  ),
  recent_events: z.array(
    z.object({
      id: z.string(),
      kind: z.string().nullable(),
      title: z.string(),
      project: z.string().nullable(),
      source: z.string().nullable(),
      time: z.string().nullable(),
      entry_id: z.string(),
    }),
  ),
  cooldown_hints: z.array(z.object({ key: z.string(), until: z.string(), reason: z.string() })),
  suggestion_context: suggestionContext,
  integration_hints: z.array(integrationHint),
});

export type AmbientContinuityCompileRequest = z.output<typeof ambientContinuityCompileRequest>;
export type AmbientContinuityCompileResponse = z.input<typeof ambientContinuityCompileResponse>;
