import { z } from 'zod';
import { MAX_ITEMS, capField, idText, integrationHint, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/workflow/grammar/compile: compile a described workflow into a gated trigger/action graph. */
export const workflowAction = z.object({
  id: idText.optional().describe('Optional stable id; defaults to a<position> (a1, a2, ...).'),
  title: shortText.min(1).describe('What the step does, e.g. "Refund the order for {{order_id}}".'),
  tool: shortText.optional().describe('Name of the tool the step uses (matched against available_tools[].name).'),
  owner: shortText.optional(),
  when: shortText.optional().describe('Guard condition under which the step runs.'),
  unless: shortText.optional().describe('Guard condition that skips the step.'),
  needs: stringList()
    .optional()
    .describe('Ids, titles or done signals of earlier steps; anything else becomes an input variable.'),
  done_signal: shortText.optional().describe('Observable signal that the step finished; later steps may need it.'),
  destructive: z.boolean().optional(),
});

export const workflowTool = z.object({
  name: shortText.min(1),
  kind: shortText.optional(),
  actions: stringList().optional().describe('Verbs the tool supports, e.g. ["read", "refund"].'),
  read_only: z.boolean().optional(),
  requires_approval: z.boolean().optional(),
});

export const workflowApproval = z.object({
  when: shortText.describe('Which steps need it: a step id, title words, a tool name, "destructive" or "*"/"all".'),
  owner: shortText.optional(),
  reason: shortText.optional(),
});

export const workflowGrammarRequest = z.object({
  surface: surfaceField,
  title: shortText.optional(),
  intent: shortText.optional(),
  specification: longText.optional().describe('Free-text description; {{placeholders}} in it become variables.'),
  trigger: shortText.optional().describe('What starts the workflow, e.g. "refund request received".'),
  conditions: stringList().optional(),
  constraints: stringList().optional(),
  exceptions: stringList().optional(),
  outputs: stringList().optional(),
  actions: z.array(workflowAction).min(1).max(MAX_ITEMS).describe('Steps of the workflow; needs[] builds the graph.'),
  available_tools: z.array(workflowTool).max(1000).optional(),
  approvals: z.array(workflowApproval).max(200).optional(),
  preferences: z
    .object({
      max_nodes: capField(MAX_ITEMS).describe('Cap on graph nodes (trigger + steps + approval gates); default 200.'),
      require_human_approvals: z.boolean().optional().describe('Gate every step that is not known to be read-only.'),
      dry_run_first: z.boolean().optional().describe('Default true: the dry-run plan must pass before a live run.'),
      prefer_read_only: z.boolean().optional().describe('Suggest read-only tools where one offers the same verb.'),
    })
    .optional(),
});

const factor = z.object({
  name: z.string(),
  weight: z.number(),
  value: z.number(),
  contribution: z.number(),
  detail: z.string(),
});

export const workflowGrammarResponse = z.object({
  surface: z.string().nullable(),
  title: z.string(),
  trigger_action_graph: z
    .object({
      nodes: z.array(
        z.object({
          id: z.string(),
          kind: z.enum(['trigger', 'action', 'approval']),
          label: z.string(),
          tool: z.string().nullable(),
          owner: z.string().nullable(),
          read_only: z.boolean().nullable(),
          destructive: z.boolean(),
          in_cycle: z.boolean(),
        }),
      ),
      edges: z.array(z.object({ from: z.string(), to: z.string(), kind: z.enum(['trigger', 'needs', 'gate']) })),
      topological_order: z.array(z.string()).describe('Action node ids in execution order (acyclic part).'),
      cycles: z.array(z.array(z.string())).describe('Each dependency cycle as the action ids it contains.'),
      truncated: z.boolean(),
      omitted_actions: z.number().int(),
    })
    .describe('Trigger/action graph honouring preferences.max_nodes.'),
  variables: z.array(
    z.object({
      name: z.string(),
      kind: z.enum(['placeholder', 'input']),
      used_by: z.array(z.string()).describe('Node ids (or "trigger") that reference the variable.'),
    }),
  ),
  approval_gates: z.array(
    z.object({
      id: z.string(),
      action_id: z.string(),
      reasons: z.array(z.string()),
      owner: z.string().nullable(),
      detail: z.string(),
    }),
  ),
  unavailable_tools: z.array(z.object({ action_id: z.string(), tool: z.string() })),
  failure_modes: z.array(
    z.object({
      kind: z.string(),
      severity: z.enum(['blocker', 'high', 'medium', 'low']),
      node_id: z.string().nullable(),
      detail: z.string(),
      mitigation: z.string(),
    }),
  ),
  readiness_score: z.object({
    score: z.number().describe('0-100, the weighted sum of the factors.'),
    level: z.enum(['ready', 'needs_review', 'blocked']),
    factors: z.array(factor),
    blockers: z.array(z.string()),
  }),
  compiled_expression: z.string().describe('Textual grammar of the graph, one statement per line.'),
  dry_run_plan: z.object({
    required_before_live: z.boolean(),
    steps: z.array(
      z.object({
        step: z.number().int(),
        node_id: z.string(),
        mode: z.enum(['observe_trigger', 'read', 'simulate', 'approval_checkpoint', 'skip_blocked']),
        instruction: z.string(),
        after: z.array(z.string()),
      }),
    ),
  }),
  integration_hints: z.array(integrationHint),
});

export type WorkflowGrammarRequest = z.infer<typeof workflowGrammarRequest>;
export type WorkflowGrammarResponse = z.infer<typeof workflowGrammarResponse>;
