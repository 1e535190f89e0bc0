import { z } from 'zod';
import { MAX_ITEMS, capField, idText, integrationHint, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/actions/plan: rank candidate actions and providers and gate them; plans only, never executes. */
export const actionHint = z.object({
  id: idText.optional().describe('Optional stable id; defaults to h<position>.'),
  title: shortText.min(1).describe('What should happen, e.g. "Send the invoice to the customer".'),
  provider: shortText.optional().describe('Preferred provider id or name.'),
  tool: shortText.optional().describe('Capability the action needs, matched against providers[].capabilities.'),
  inputs: stringList().optional(),
  effects: stringList().optional().describe('Declared effects, e.g. ["external_write", "customer_touch", "money"].'),
  destructive: z.boolean().optional(),
  external: z.boolean().optional().describe("Touches a system outside the caller's product."),
});

/**
 * Spec: "field types are string unless stated", and reliability/cost are not stated: a number, a
 * numeric string ("0.9", "95%", "$2.50") or a qualitative label all work (mapped in the tables below).
 */
const RELIABILITY_LABELS: Record<string, number> = {
  'very low': 0.1,
  low: 0.3,
  medium: 0.6,
  moderate: 0.6,
  high: 0.85,
  'very high': 0.97,
};
const COST_LABELS: Record<string, number> = {
  free: 0,
  'very low': 0.5,
  low: 1,
  cheap: 1,
  medium: 3,
  moderate: 3,
  high: 10,
  expensive: 10,
  'very high': 30,
};

function numberOrLabel(labels: Record<string, number>, what: string) {
  return z.union([z.number(), z.string().max(50)]).transform((v, ctx) => {
    if (typeof v === 'number') return v;
    const text = v.trim().toLowerCase().replace(/[_-]+/g, ' ').replace(/\s+/g, ' ');
    if (Object.hasOwn(labels, text)) return labels[text];
    const numeric = /^\$?\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)$/.exec(text);
    if (numeric) return numeric[2] ? Number(numeric[1]) / 100 : Number(numeric[1]);
    ctx.addIssue({
      code: 'custom',
      message: `${what} must be a number, a numeric string or one of: ${Object.keys(labels).join(', ')}`,
    });
    return z.NEVER;
  });
}

export const provider = z.object({
  id: idText,
  name: shortText.optional(),
  kind: shortText.optional(),
  capabilities: stringList().optional(),
  scopes: stringList().optional(),
  reliability: numberOrLabel(RELIABILITY_LABELS, 'reliability')
    .pipe(z.number().min(0).max(1))
    .optional()
    .describe(
      `Observed success rate 0..1 (default 0.5): a number, a numeric string ("0.9", "95%") or ${Object.keys(RELIABILITY_LABELS).join(', ')}.`,
    ),
  cost: numberOrLabel(COST_LABELS, 'cost')
    .pipe(z.number().min(0).max(1e9))
    .optional()
    .describe(
      `Relative cost per call (default 0): a number, a numeric string ("2.5", "$0.02") or ${Object.keys(COST_LABELS).join(', ')}.`,
    ),
  requires_approval: z.boolean().optional(),
  read_only: z.boolean().optional(),
  available: z.boolean().optional().describe('Default true.'),
});

export const actionsPlanRequest = z.object({
  surface: surfaceField,
  intent: shortText.min(1).describe('What the user wants done.'),
  context: longText.optional(),
  risk_tolerance: z.string().max(50).optional().describe('low | medium | high (default medium).'),
  constraints: stringList().optional(),
  action_hints: z
    .array(actionHint)
    .max(MAX_ITEMS)
    .optional()
    .describe('Candidate actions; when empty the intent is the single action.'),
  available_providers: z.array(provider).max(1000).optional(),
  approval_policy: z
    .object({
      require_for_external_writes: z.boolean().optional(),
      require_for_customer_touch: z.boolean().optional(),
      require_for_money: z.boolean().optional(),
      require_for_destructive: z.boolean().optional(),
      allowed_autonomous_effects: stringList().optional(),
      approval_owner: shortText.optional(),
    })
    .optional()
    .describe('Every require_for_* defaults to true.'),
  memory_policy: z
    .object({
      minimize_context: z.boolean().optional(),
      allowed_memory_kinds: stringList().optional(),
      prohibited_memory_kinds: stringList().optional(),
      record_outcome: z.boolean().optional(),
    })
    .optional(),
  preferences: z
    .object({
      max_candidates: capField(MAX_ITEMS).describe('Cap on ranked candidates (default 50).'),
      max_providers_per_action: capField(20).describe('Providers considered per action (default 3).'),
    })
    .optional(),
});

const factor = z.object({ name: z.string(), weight: z.number(), value: z.number(), contribution: z.number() });

export const actionsPlanResponse = z.object({
  surface: z.string().nullable(),
  intent: z.string(),
  risk_tolerance: z.enum(['low', 'medium', 'high']),
  ranked_action_candidates: z.array(
    z.object({
      rank: z.number().int(),
      action_id: z.string(),
      title: z.string(),
      provider_id: z.string().nullable(),
      score: z.number(),
      factors: z.array(factor),
      effects: z.array(z.string()),
      eligible: z.boolean(),
      notes: z.array(z.string()),
    }),
  ),
  recommended_provider_route: z.array(
    z.object({
      step: z.number().int(),
      action_id: z.string(),
      provider_id: z.string().nullable(),
      fallback_provider_id: z.string().nullable(),
      requires_approval: z.boolean(),
    }),
  ),
  approval_gate: z.object({
    required: z.boolean(),
    owner: z.string().nullable(),
    gated_actions: z.array(z.object({ action_id: z.string(), reasons: z.array(z.string()) })),
    autonomous_actions: z.array(z.string()),
  }),
  policy_labels: z.array(z.object({ action_id: z.string(), labels: z.array(z.string()) })),
  audit_plan: z.object({
    events: z.array(z.string()),
    records: z.array(z.object({ action_id: z.string(), fields: z.array(z.string()), redact: z.array(z.string()) })),
  }),
  dry_run_instructions: z.array(
    z.object({ action_id: z.string(), provider_id: z.string().nullable(), instruction: z.string() }),
  ),
  memory_plan: z.object({
    minimize_context: z.boolean(),
    record_outcome: z.boolean(),
    store_kinds: z.array(z.string()),
    never_store: z.array(z.string()),
    seeds: z.array(z.object({ kind: z.string(), action_id: z.string(), content: z.string() })),
  }),
  integration_hints: z.array(integrationHint),
});

export type ActionsPlanRequest = z.infer<typeof actionsPlanRequest>;
export type ActionsPlanResponse = z.infer<typeof actionsPlanResponse>;
