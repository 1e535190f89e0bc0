import { z } from 'zod';
import { MAX_ITEMS, capField, idText, integrationHint, shortText, surfaceField } from './common';

/** POST /v1/procedural/crystallize (path-only in the spec; shape designed here). */
export const traceStep = z.object({
  action: shortText.min(1).describe('What was done, e.g. "open invoice".'),
  tool: shortText.optional(),
  target: shortText.optional().describe('What it was done to (file, record, URL).'),
  params: z
    .array(z.object({ name: z.string().min(1).max(100), value: shortText }))
    .max(50)
    .optional(),
});

export const actionTrace = z.object({
  id: idText,
  actor: shortText.optional(),
  outcome: shortText.optional().describe('success, failure, partial, ...'),
  steps: z.array(traceStep).min(1).max(500),
});

export const proceduralCrystallizeRequest = z.object({
  surface: surfaceField,
  intent: shortText.optional().describe('What the repeated work is for.'),
  traces: z.array(actionTrace).min(1).max(MAX_ITEMS).describe('Repeated observed executions of the same task.'),
  preferences: z
    .object({
      min_support: z
        .number()
        .min(0)
        .max(1)
        .optional()
        .describe('Share of traces a step needs to enter the procedure (default 0.5).'),
      max_steps: capField(200),
      max_variables: capField(200),
      max_alignments: capField(1000).describe('How many per-trace alignments to report (default 100).'),
    })
    .default({}),
});
export type ProceduralCrystallizeRequest = z.output<typeof proceduralCrystallizeRequest>;

export const proceduralCrystallizeResponse = z.object({
  procedure: z.object({
    name: z.string(),
    intent: z.string().nullable(),
    steps: z.array(
      z.object({
        id: z.string(),
        order: z.number().int(),
        action: z.string(),
        tool: z.string().nullable(),
        support: z.number(),
        optional: z.boolean(),
        variable_names: z.array(z.string()),
        constants: z.array(z.object({ name: z.string(), value: z.string() })),
      }),
    ),
  }),
  common_sequence: z.array(z.string()).describe('Step ids in the consensus order.'),
  variables: z.array(
    z.object({
      name: z.string(),
      step_id: z.string(),
      source: z.string(),
      kind: z.enum(['number', 'date', 'email', 'url', 'id', 'text']),
      distinct_count: z.number().int(),
      examples: z.array(z.string()),
    }),
  ),
  trace_alignment: z.array(
    z.object({
      trace_id: z.string(),
      matched_step_ids: z.array(z.string()),
      coverage: z.number(),
      order_consistency: z.number(),
      outcome: z.string().nullable(),
    }),
  ),
  variations: z.array(
    z.object({ action: z.string(), tool: z.string().nullable(), support: z.number(), reason: z.string() }),
  ),
  confidence: z.object({
    score: z.number().min(0).max(1),
    factors: z.array(z.object({ name: z.string(), value: z.number(), weight: z.number() })),
  }),
  integration_hints: z.array(integrationHint),
});
export type ProceduralCrystallizeResponse = z.input<typeof proceduralCrystallizeResponse>;
