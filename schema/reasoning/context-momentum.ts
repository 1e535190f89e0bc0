import { z } from 'zod';
import { MAX_ITEMS, capField, idText, integrationHint, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/context/momentum */
export const momentumItem = z.object({
  id: idText,
  title: shortText.min(1),
  content: longText.optional(),
  kind: shortText.optional().describe('task, note, idea, link, message, ...'),
  source: shortText.optional(),
  project_hint: shortText.optional(),
  status: shortText.optional().describe('open, in_progress, blocked, waiting, done, archived'),
  tags: stringList(50).optional(),
});

export const contextMomentumRequest = z.object({
  surface: surfaceField,
  current_project: shortText.optional(),
  available_minutes: z
    .number()
    .int()
    .min(0)
    .max(24 * 60)
    .optional()
    .describe('Time available now (default 30).'),
  user_state: z
    .object({ energy: shortText.optional(), mood: shortText.optional(), mode: shortText.optional() })
    .default({}),
  preferences: z
    .object({
      max_packets: capField(100).describe('At most this many future-self packets (default 3).'),
      overwhelm_sensitive: z.boolean().optional(),
      preserve_novelty: z.boolean().optional(),
    })
    .default({}),
  items: z.array(momentumItem).min(1).max(MAX_ITEMS).describe('Open loops, notes and tasks to re-enter.'),
});
export type ContextMomentumRequest = z.output<typeof contextMomentumRequest>;

const move = z
  .object({ item_id: z.string(), action: z.string(), minutes: z.number().int(), score: z.number() })
  .nullable();

export const contextMomentumResponse = z.object({
  actionability_buckets: z.object({
    ready_now: z.array(z.string()),
    needs_more_time: z.array(z.string()),
    needs_more_energy: z.array(z.string()),
    blocked: z.array(z.string()),
    parked: z.array(z.string()),
    done: z.array(z.string()),
  }),
  future_self_packets: z.array(
    z.object({
      id: z.string(),
      project: z.string(),
      item_ids: z.array(z.string()),
      resume_cue: z.string(),
      why_it_matters: z.string(),
      estimated_minutes: z.number().int(),
      score: z.number(),
    }),
  ),
  next_moves: z.object({ five_minute: move, thirty_minute: move }),
  preserved_stepping_stone: z.object({ item_id: z.string(), reason: z.string(), note: z.string() }).nullable(),
  memory_seeds: z.array(z.object({ key: z.string(), value: z.string(), item_ids: z.array(z.string()) })),
  integration_hints: z.array(integrationHint),
});
export type ContextMomentumResponse = z.input<typeof contextMomentumResponse>;
