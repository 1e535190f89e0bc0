import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, stringList, surfaceField } from './common';

/** One thing an intent could be about: paused work, an open loop, a commitment, active work. */
export const suggestionCandidate = z.object({
  id: idText.describe('Ledger entry id (work item, event or commitment id).'),
  kind: shortText.nullable().optional().describe('Item kind, e.g. task, doc, thread, meeting.'),
  title: shortText,
  project: shortText.nullable().optional(),
  state: z
    .enum(['active', 'paused', 'open_loop', 'commitment', 'overdue', 'done'])
    .describe('Ledger state; decides the intent verb.'),
  last_seen: dateTime.nullable().optional(),
  due: dateTime.nullable().optional(),
  weight: z.number().min(0).max(1).optional().describe('Importance 0..1 from the ledger (default 0.5).'),
  surfaces: stringList(20).optional().describe('Surfaces the item was seen on.'),
  signals: stringList(50).optional().describe('Signal words attached to the item (e.g. "question", "blocked").'),
});

export const suggestionContext = z.object({
  surface: shortText.nullable().optional(),
  profile: shortText.nullable().optional(),
  active_goal: shortText.nullable().optional(),
  active_project: shortText.nullable().optional(),
  now: dateTime.nullable().optional().describe('Clock of the compile; suggest uses its own `now` first.'),
  candidates: z.array(suggestionCandidate).max(MAX_ITEMS).describe('Ranked input for suggestions.'),
  cooldowns: z
    .array(
      z.object({
        key: idText.describe('Candidate id or intent key "verb:id".'),
        until: dateTime,
        reason: shortText.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional(),
});

export const ambientIntentSuggestRequest = z.object({
  surface: surfaceField,
  suggestion_context: suggestionContext.describe(
    'The suggestion_context object returned by /ambient/continuity/compile.',
  ),
  signals: z
    .array(
      z.object({
        id: idText.optional(),
        kind: shortText.describe('e.g. app_open, calendar_gap, energy, mention, location, idle.'),
        value: shortText.optional().describe('Free text or a level ("high") for the signal.'),
        strength: z.number().min(0).max(1).optional(),
        time: dateTime.optional(),
        project: shortText.optional(),
        item_id: idText.optional().describe('Candidate id the signal is about, if known.'),
        tags: stringList(50).optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe('Current signals from the surface.'),
  now: dateTime.optional(),
  timezone: z.string().max(64).optional(),
  preferences: z
    .object({
      max_suggestions: capField(50).describe('Cap on suggestions; default 3.'),
      cooldown_minutes: z
        .number()
        .int()
        .min(0)
        .max(10_080)
        .optional()
        .describe('Minimum minutes between two suggestions of the same candidate; default 90.'),
      min_score: z.number().min(0).max(1).optional().describe('Suggestions scoring below are dropped; default 0.2.'),
      quiet: z.boolean().optional().describe('Only suggest commitments and overdue items.'),
    })
    .optional(),
});

export const ambientIntentSuggestResponse = z.object({
  suggestions: z.array(
    z.object({
      id: z.string(),
      intent: z.enum(['resume', 'close_loop', 'prepare', 'reschedule', 'continue']),
      candidate_id: z.string(),
      title: z.string(),
      score: z.number(),
      factors: z.object({
        state: z.number(),
        weight: z.number(),
        recency: z.number(),
        urgency: z.number(),
        signal_match: z.number(),
        goal_alignment: z.number(),
      }),
      reasons: z.array(z.string()),
      evidence_signal_ids: z.array(z.string()),
      cooldown_key: z.string(),
    }),
  ),
  suppressed: z.array(z.object({ candidate_id: z.string(), reason: z.string(), until: z.string().nullable() })),
  next_cooldowns: z
    .array(z.object({ key: z.string(), until: z.string().nullable(), reason: z.string() }))
    .describe('Cooldowns to pass back in the next suggestion_context.'),
  summary: z.object({
    considered: z.number().int(),
    suggested: z.number().int(),
    suppressed: z.number().int(),
    clock: z.string().nullable(),
  }),
  integration_hints: z.array(integrationHint),
});

export type SuggestionContext = z.output<typeof suggestionContext>;
export type AmbientIntentSuggestRequest = z.output<typeof ambientIntentSuggestRequest>;
export type AmbientIntentSuggestResponse = z.input<typeof ambientIntentSuggestResponse>;
