import { z } from 'zod';
import { capField, dateTime, integrationHint, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/behavior/create */
export const behaviorType = z.enum(['daily', 'habit', 'todo', 'goal', 'shared_goal']);

export const behaviorCreateRequest = z.object({
  type: behaviorType.describe('daily, habit, todo, goal or shared_goal'),
  title: shortText.min(1).describe('What the behaviour is, e.g. "Stretch for 10 minutes".'),
  cadence: shortText
    .optional()
    .describe('Free text: "every weekday at 7am", "3 times a week", "every 2 days", "by Friday".'),
  surface: surfaceField,
  reinforcement_mode: shortText.optional().describe('streak, points, gentle, social or none (default by type).'),
  stakes: shortText.optional().describe('low, medium or high, or a free-text commitment.'),
  recovery_policy: shortText.optional().describe('grace, catch_up, pause, shrink or reset (default by type).'),
  privacy: shortText.optional().describe('private, shared or public (default private; shared for shared_goal).'),
  notes: longText.optional(),
  participants: stringList(50).optional().describe('People sharing a shared_goal.'),
  now: dateTime
    .optional()
    .describe('Current date-time; needed to list upcoming occurrences and resolve relative dues.'),
  timezone: z.string().max(64).optional(),
  preferences: z.object({ max_occurrences: capField(60) }).default({}),
});
export type BehaviorCreateRequest = z.output<typeof behaviorCreateRequest>;

export const behaviorCreateResponse = z.object({
  temporal_contract: z.object({
    kind: z.enum(['recurring', 'one_off', 'target']),
    frequency: z.enum(['daily', 'weekly', 'monthly', 'interval', 'once']),
    interval: z.number().int(),
    by_weekday: z.array(z.string()),
    times_per_period: z.number().int().nullable(),
    period: z.enum(['day', 'week', 'month']).nullable(),
    times_of_day: z.array(z.string()),
    duration_minutes: z.number().int().nullable(),
    rrule: z.string().nullable().describe('RFC 5545 recurrence rule for calendar export.'),
    due: z.object({ hint: z.string(), at: z.string().nullable() }).nullable(),
    next_occurrences: z.array(z.string()),
    matched_phrases: z.array(z.string()),
    assumptions: z.array(z.string()),
  }),
  feedback_model: z.object({
    surface: z.string(),
    channel: z.string(),
    reinforcement: z.string(),
    signals: z.array(z.string()),
    reward: z.string(),
    tone: z.string(),
    streak_visible: z.boolean(),
    nudge_policy: z.string(),
  }),
  initial_state: z.object({
    status: z.enum(['active', 'not_started']),
    streak: z.number().int(),
    completions: z.number().int(),
    period_target: z.number().int(),
    period_progress: z.number().int(),
    next_due_at: z.string().nullable(),
    privacy: z.string(),
    participants: z.array(z.string()),
    stakes: z.string(),
  }),
  recovery_policy: z.object({
    kind: z.enum(['grace', 'catch_up', 'pause', 'shrink', 'reset']),
    grace_periods: z.number().int(),
    rules: z.array(z.string()),
  }),
  integration_hints: z.array(integrationHint),
});
export type BehaviorCreateResponse = z.input<typeof behaviorCreateResponse>;
