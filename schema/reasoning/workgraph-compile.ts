import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, integrationHint, shortText, stringList, surfaceField } from './common';

/** A unit of work shared by /workgraph/compile and /workgraph/answer. */
export const workItem = z.object({
  id: idText,
  title: shortText.optional(),
  owner: shortText.optional(),
  status: z
    .string()
    .max(50)
    .optional()
    .describe('todo | in_progress | blocked | done (also complete, closed, cancelled).'),
  depends_on: stringList().optional().describe('Ids of items that must be done first.'),
  estimate_hours: z.number().min(0).max(100_000).optional().describe('Remaining effort (default 1 for open items).'),
  due: dateTime.optional().describe('ISO date or date-time.'),
  priority: z.number().min(-1e6).max(1e6).optional(),
  tags: stringList(50).optional(),
});

export const workItems = z
  .array(workItem)
  .min(1)
  .max(MAX_ITEMS)
  .describe('Work items; the first occurrence of an id wins.');

export const workgraphClock = {
  now: dateTime
    .optional()
    .describe('Current instant; lateness and forecasts need it (never read from the server clock).'),
  timezone: z.string().max(64).optional().describe('IANA zone for dates without an offset (default UTC).'),
};

export const workgraphCompileRequest = z.object({
  surface: surfaceField,
  intent: shortText.optional(),
  ...workgraphClock,
  items: workItems,
  preferences: z
    .object({
      max_nodes: capField(MAX_ITEMS).describe(
        'Cap on graph nodes (default 200); critical and blocked items are kept first.',
      ),
      hours_per_day: z
        .number()
        .min(0.5)
        .max(24)
        .optional()
        .describe('Working hours per person-day for forecasts (default 6).'),
    })
    .optional(),
});

const reason = z.object({
  kind: z.enum(['open_dependency', 'missing_dependency', 'dependency_cycle', 'status_blocked']),
  refs: z.array(z.string()),
});

export const workgraphCompileResponse = z.object({
  surface: z.string().nullable(),
  nodes: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      owner: z.string().nullable(),
      status: z.string(),
      open: z.boolean(),
      estimate_hours: z.number(),
      earliest_start_hours: z.number().nullable(),
      earliest_finish_hours: z.number().nullable(),
      slack_hours: z.number().nullable(),
      critical: z.boolean(),
      blocked: z.boolean(),
      ready: z.boolean(),
      due: z.string().nullable(),
      forecast_finish: z.string().nullable(),
      late: z.enum(['overdue', 'at_risk']).nullable(),
    }),
  ),
  edges: z.array(z.object({ from: z.string(), to: z.string() })).describe('from must finish before to.'),
  topological_order: z.array(z.string()),
  critical_path: z.object({
    item_ids: z.array(z.string()),
    total_hours: z.number(),
    forecast_finish: z.string().nullable(),
  }),
  blocked_items: z.array(z.object({ id: z.string(), reasons: z.array(reason) })),
  ready_items: z.array(z.string()),
  late_items: z.array(
    z.object({
      id: z.string(),
      late: z.enum(['overdue', 'at_risk']),
      due: z.string(),
      forecast_finish: z.string().nullable(),
    }),
  ),
  owner_load: z.array(
    z.object({
      owner: z.string(),
      open_items: z.number().int(),
      open_hours: z.number(),
      ready_items: z.number().int(),
      blocked_items: z.number().int(),
      days_of_work: z.number(),
    }),
  ),
  cycles: z.array(z.array(z.string())),
  truncated: z.boolean(),
  omitted_nodes: z.number().int(),
  warnings: z.array(z.string()),
  integration_hints: z.array(integrationHint),
});

export type WorkItem = z.infer<typeof workItem>;
export type WorkgraphCompileRequest = z.infer<typeof workgraphCompileRequest>;
export type WorkgraphCompileResponse = z.infer<typeof workgraphCompileResponse>;
