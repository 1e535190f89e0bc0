import { z } from 'zod';
import { MAX_ITEMS, capField, integrationHint, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/procedure/compile */
export const procedureObservation = z.object({
  title: shortText.min(1),
  detail: longText.optional(),
  actor: shortText.optional(),
  tool: shortText.optional(),
  evidence: shortText.optional(),
  outcome: shortText.optional().describe('success, failure, partial, ...'),
  tags: stringList(50).optional(),
});

export const procedureCompileRequest = z.object({
  surface: surfaceField,
  title: shortText.min(1).describe('Name of the procedure.'),
  description: longText.optional(),
  transcript: longText.optional().describe('Narrated walk-through; procedural sentences become steps.'),
  actor: shortText.optional(),
  tools: stringList(100).default([]),
  inputs: stringList(100).default([]),
  outputs: stringList(100).default([]),
  constraints: stringList(100).default([]),
  frequency: shortText.optional().describe('e.g. daily, weekly, per order'),
  outcome_signal: shortText.optional().describe('How success is recognised.'),
  observations: z.array(procedureObservation).max(MAX_ITEMS).default([]).describe('Observed executions of steps.'),
  preferences: z.object({ max_steps: capField(500) }).default({}),
});
export type ProcedureCompileRequest = z.output<typeof procedureCompileRequest>;

const evidenceRef = z.object({
  source: z.enum(['transcript', 'observation']),
  index: z.number().int().describe('Sentence index in the transcript, or index in observations[].'),
});

export const procedureCompileResponse = z.object({
  sop: z.object({
    title: z.string(),
    purpose: z.string(),
    roles: z.array(z.string()),
    preconditions: z.array(z.string()),
    steps: z.array(
      z.object({
        id: z.string(),
        order: z.number().int(),
        action: z.string(),
        kind: z.enum(['action', 'decision', 'check']),
        actor: z.string().nullable(),
        tool: z.string().nullable(),
        evidence: z.array(evidenceRef),
      }),
    ),
    outputs: z.array(z.string()),
    success_signal: z.string().nullable(),
  }),
  checklist: z.array(z.object({ id: z.string(), step_id: z.string().nullable(), text: z.string() })),
  skill_candidate: z.object({
    name: z.string(),
    trigger: z.string(),
    inputs: z.array(z.string()),
    outputs: z.array(z.string()),
    tools: z.array(z.string()),
    step_ids: z.array(z.string()),
    confidence: z.number(),
  }),
  automation_readiness: z.object({
    score: z.number().min(0).max(100),
    factors: z.array(z.object({ name: z.string(), value: z.number(), weight: z.number() })),
    blockers: z.array(z.object({ step_id: z.string().nullable(), reason: z.string() })),
    unlisted_tools: z.array(z.string()),
  }),
  skill_tier_seed: z.object({
    tier: z.enum(['manual', 'assisted', 'automatable']),
    reason: z.string(),
    automate_first: z.array(z.string()),
  }),
  integration_hints: z.array(integrationHint),
});
export type ProcedureCompileResponse = z.input<typeof procedureCompileResponse>;
