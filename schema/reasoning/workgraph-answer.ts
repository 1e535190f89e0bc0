import { z } from 'zod';
import { capField, integrationHint, shortText, surfaceField } from './common';
import { workItems, workgraphClock } from './workgraph-compile';

/** POST /v1/workgraph/answer: answer a question about work items from the computed graph. */
export const workgraphAnswerRequest = z.object({
  surface: surfaceField,
  question: shortText
    .min(1)
    .describe('e.g. "What blocks api?", "Who owns launch?", "What should ben do next?", "What is late?"'),
  subject: shortText.optional().describe('Item id or owner the question is about (otherwise found in the question).'),
  ...workgraphClock,
  items: workItems,
  preferences: z
    .object({
      max_evidence: capField(1000).describe('Cap on findings and evidence ids (default 20).'),
      hours_per_day: z.number().min(0.5).max(24).optional(),
    })
    .optional(),
});

export const questionKinds = [
  'blockers',
  'dependents',
  'owner',
  'next',
  'late',
  'critical_path',
  'load',
  'summary',
] as const;

export const workgraphAnswerResponse = z.object({
  surface: z.string().nullable(),
  question_kind: z.enum(questionKinds),
  subject: z.object({ item_id: z.string().nullable(), owner: z.string().nullable() }),
  answer: z.string().describe('One-paragraph answer computed from the graph.'),
  findings: z.array(z.object({ item_id: z.string(), detail: z.string() })),
  evidence_node_ids: z.array(z.string()).describe('Item ids the answer rests on.'),
  confidence: z.number().describe('0..1: lower when the subject was guessed or the clock is missing.'),
  follow_up_questions: z.array(z.string()),
  integration_hints: z.array(integrationHint),
});

export type WorkgraphAnswerRequest = z.infer<typeof workgraphAnswerRequest>;
export type WorkgraphAnswerResponse = z.infer<typeof workgraphAnswerResponse>;
