import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, surfaceField } from './common';

const energy = shortText.describe('Energy level: low, medium or high (other words are read as medium).');
const minutes = z.number().int().min(0).max(100_000);

export const temporalCoordinateRequest = z.object({
  surface: surfaceField,
  horizon: shortText
    .optional()
    .describe(
      'Planning horizon: today, tomorrow, week, "3 days", or an ISO date/date-time it ends at. Relative to `now`.',
    ),
  energy: energy.optional().describe('Current energy, used for windows that name none.'),
  now: dateTime
    .optional()
    .describe('Request clock (ISO). Without it nothing is clipped to "now" and relative due hints stay unresolved.'),
  timezone: z.string().max(64).optional().describe('IANA zone for times without offset and for the output times.'),
  available: z
    .array(
      z.object({
        label: shortText.optional(),
        start: dateTime.optional(),
        end: dateTime.optional(),
        minutes: minutes.optional().describe('Capacity; without start/end the window floats (no clock times).'),
        energy: energy.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe('Windows in which tasks may be placed.'),
  fixed_events: z
    .array(
      z.object({
        title: shortText.optional(),
        start: dateTime.optional(),
        end: dateTime.optional(),
        minutes: minutes.optional(),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe('Immovable events; available windows are cut around them.'),
  tasks: z
    .array(
      z.object({
        id: idText,
        title: shortText.optional(),
        project: shortText.optional(),
        minutes: minutes.optional().describe('Estimated minutes; default 30.'),
        due_hint: shortText.optional().describe('"2026-05-01", "Friday", "tomorrow", "end of week", ...'),
        energy: energy.optional(),
        importance: z
          .union([shortText, z.number().min(0).max(10)])
          .optional()
          .describe('low/medium/high/critical or 0-10.'),
        status: shortText.optional().describe('todo, in_progress, blocked, waiting, done, cancelled.'),
        dependencies: z.array(idText).max(100).optional().describe('Ids of tasks that must finish first.'),
      }),
    )
    .max(MAX_ITEMS)
    .default([])
    .describe('Tasks to place (default none: only the fixed events and windows are laid out).'),
  preferences: z
    .object({
      max_blocks: capField(1000).describe('Cap on schedule proposals; default 20.'),
      protect_focus: z
        .boolean()
        .optional()
        .describe('10-minute buffers around fixed events; high-energy work only in blocks of 45+ minutes.'),
      prefer_short_starts: z.boolean().optional().describe('Open with a short (<= 30 min) ready task.'),
      max_conflicts: capField(1000).describe('Cap on reported conflicts; default 50.'),
    })
    .optional(),
});

const ref = z.object({ task_id: z.string(), title: z.string(), reason: z.string(), start: z.string().nullable() });

export const temporalCoordinateResponse = z.object({
  summary: z.object({
    horizon_start: z.string().nullable(),
    horizon_end: z.string().nullable(),
    free_minutes: z.number(),
    task_minutes: z.number(),
    planned_minutes: z.number(),
    utilization: z.number().describe('planned / free minutes (0 when nothing is free).'),
    scheduled_count: z.number().int(),
    unscheduled_count: z.number().int(),
  }),
  buckets: z
    .object({ now: z.array(ref), next: z.array(ref), later: z.array(ref) })
    .describe('now / next / later buckets.'),
  schedule_proposals: z.array(
    z.object({
      block_id: z.string(),
      task_id: z.string(),
      title: z.string(),
      project: z.string().nullable(),
      start: z.string().nullable(),
      end: z.string().nullable(),
      minutes: z.number(),
      window_index: z.number().int().nullable().describe('Index in available[]; null for the implicit horizon window.'),
      window_label: z.string().nullable(),
      energy_match: z.enum(['exact', 'above', 'below']),
      due: z.string().nullable(),
      depends_on_blocks: z.array(z.string()),
      score: z.number(),
      reasons: z.array(z.string()),
    }),
  ),
  order: z.array(z.string()).describe('Dependency-respecting priority order of open task ids.'),
  unscheduled: z.array(z.object({ task_id: z.string(), reason: z.string() })),
  conflicts: z.array(
    z.object({
      id: z.string(),
      kind: z.enum([
        'fixed_overlap',
        'window_overlaps_fixed',
        'over_commitment',
        'dependency_cycle',
        'unknown_dependency',
        'duplicate_task_id',
        'invalid_time',
        'task_too_long',
        'due_at_risk',
        'no_availability',
      ]),
      severity: z.enum(['info', 'warning', 'error']),
      detail: z.string(),
      task_ids: z.array(z.string()),
      event_indexes: z.array(z.number().int()).describe('Indexes in fixed_events[].'),
      window_indexes: z.array(z.number().int()).describe('Indexes in available[].'),
    }),
  ),
  memory_seeds: z.array(z.object({ id: z.string(), kind: z.string(), text: z.string() })),
  integration_hints: z.array(integrationHint),
});

export type TemporalCoordinateRequest = z.output<typeof temporalCoordinateRequest>;
export type TemporalCoordinateResponse = z.input<typeof temporalCoordinateResponse>;
