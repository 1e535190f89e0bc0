import { z } from 'zod';
import { dateTime, integrationHint, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/quest/scaffold */
export const questScaffoldRequest = z.object({
  goal: shortText.min(1).describe('What the person wants to achieve.'),
  notes: longText
    .optional()
    .describe('Free notes; bullet lines and imperative sentences become steps, heading lines become milestones.'),
  surface: surfaceField,
  constraints: stringList(100).default([]).describe('e.g. "max 45 minutes per day", "no weekends", "mornings only"'),
  preferences: z
    .object({
      maxVisibleSteps: z
        .number()
        .int()
        .min(1)
        .max(50)
        .optional()
        .describe('At most this many steps are shown at once (default 5).'),
      preferredStepMins: z
        .number()
        .int()
        .min(1)
        .max(240)
        .optional()
        .describe('Target step length; longer steps are split (default 25).'),
      energy: shortText.optional().describe('low, medium or high'),
      overwhelmSensitive: z.boolean().optional().describe('Shows at most 3 steps and starts with a tiny first action.'),
    })
    .default({}),
  now: dateTime.optional().describe('Current date-time; review dates are given only when present.'),
  timezone: z.string().max(64).optional(),
});
export type QuestScaffoldRequest = z.output<typeof questScaffoldRequest>;

const step = z.object({
  id: z.string(),
  title: z.string(),
  minutes: z.number().int(),
  milestone_id: z.string(),
  energy_fit: z.enum(['low', 'medium', 'high']),
});

export const questScaffoldResponse = z.object({
  named_quest: z.object({ name: z.string(), goal: z.string(), tagline: z.string() }),
  role_identity: z.object({ role: z.string(), statement: z.string() }),
  first_action: z.object({ step_id: z.string(), text: z.string(), minutes: z.number().int() }),
  visible_steps: z.array(step).describe('The steps shown now; never more than maxVisibleSteps.'),
  hidden_step_count: z.number().int(),
  milestones: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      order: z.number().int(),
      step_count: z.number().int(),
      minutes: z.number().int(),
      visible_step_ids: z.array(z.string()),
    }),
  ),
  daily_rhythm: z.object({
    sessions_per_day: z.number().int(),
    session_minutes: z.number().int(),
    daily_minutes: z.number().int(),
    days: z.array(z.string()),
    time_of_day: z.string(),
    rationale: z.array(z.string()),
  }),
  workspace_sections: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      purpose: z.string(),
      step_ids: z.array(z.string()),
      item_count: z.number().int(),
    }),
  ),
  progress_model: z.object({
    unit: z.string(),
    total_steps: z.number().int(),
    total_minutes: z.number().int(),
    estimated_days: z.number().int(),
    milestone_weights: z.array(z.object({ milestone_id: z.string(), weight: z.number() })),
    completion_rule: z.string(),
  }),
  review_schedule: z.array(
    z.object({
      kind: z.enum(['daily_check', 'milestone_review', 'weekly_review']),
      day_offset: z.number().int(),
      at: z.string().nullable(),
      milestone_id: z.string().nullable(),
    }),
  ),
  memory_seeds: z.array(z.object({ key: z.string(), value: z.string(), kind: z.string() })),
  integration_hints: z.array(integrationHint),
});
export type QuestScaffoldResponse = z.input<typeof questScaffoldResponse>;
