import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, stringList, surfaceField } from './common';

/** POST /v1/contextual-action/plan: rank the actions that fit what the user is doing right now (plans only). */
export const contextualActionPlanRequest = z.object({
  surface: surfaceField,
  intent: shortText.optional(),
  context: z
    .object({
      app: shortText.optional().describe('Foreground app, e.g. "mail".'),
      selection: z.string().max(5000).optional().describe('Selected text, if any.'),
      selection_kind: z.string().max(50).optional().describe('text | email | address | date | file | url | code | ...'),
      window_title: shortText.optional(),
      url: z.string().max(2000).optional(),
    })
    .describe('Where the user is now.'),
  recent_events: z
    .array(
      z.object({
        id: idText,
        kind: z.string().max(50),
        title: shortText.optional(),
        summary: shortText.optional(),
        app: shortText.optional(),
        time: dateTime.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe('Recent activity; the latest (by time, else by position) weigh most.'),
  candidate_actions: z
    .array(
      z.object({
        id: idText,
        title: shortText.min(1),
        description: shortText.optional(),
        apps: stringList(50).optional().describe('Apps where the action applies; empty means anywhere.'),
        selection_kinds: stringList(50).optional(),
        keywords: stringList(50).optional(),
        effects: stringList(20).optional(),
        destructive: z.boolean().optional(),
        external: z.boolean().optional(),
        requires_approval: z.boolean().optional(),
        reversible: z.boolean().optional(),
      }),
    )
    .min(1)
    .max(MAX_ITEMS),
  approval_policy: z
    .object({
      require_for_external: z.boolean().optional(),
      require_for_destructive: z.boolean().optional(),
      auto_allowed_effects: stringList().optional(),
    })
    .optional(),
  preferences: z
    .object({
      max_actions: capField(1000).describe('Cap on ranked actions (default 5).'),
      recent_window: capField(1000).describe('How many latest events count (default 50).'),
    })
    .optional(),
});

export const contextualActionPlanResponse = z.object({
  surface: z.string().nullable(),
  ranked_actions: z.array(
    z.object({
      rank: z.number().int(),
      action_id: z.string(),
      title: z.string(),
      score: z.number(),
      factors: z.array(z.object({ name: z.string(), weight: z.number(), value: z.number() })),
      reasons: z.array(z.string()),
      required_approvals: z.array(z.string()),
      evidence_event_ids: z.array(z.string()),
    }),
  ),
  suppressed: z.array(z.object({ action_id: z.string(), reason: z.string() })),
  suppressed_count: z.number().int(),
  context_summary: z.object({
    app: z.string().nullable(),
    selection_kind: z.string().nullable(),
    context_words: z.array(z.string()),
    recent_event_kinds: z.array(z.object({ kind: z.string(), count: z.number().int() })),
    window_size: z.number().int(),
  }),
  integration_hints: z.array(integrationHint),
});

export type ContextualActionPlanRequest = z.infer<typeof contextualActionPlanRequest>;
export type ContextualActionPlanResponse = z.infer<typeof contextualActionPlanResponse>;
