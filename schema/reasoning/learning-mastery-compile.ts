import { z } from 'zod';
import { MAX_ITEMS, capField, dateTime, idText, longText, shortText, stringList, surfaceField } from './common';

/** POST /v1/learning/mastery/compile */
export const learningSource = z.object({
  id: idText.describe('Caller id of the source; flashcards and quizzes trace back to it.'),
  kind: shortText.optional().describe('e.g. notes, article, textbook, transcript'),
  title: shortText.optional(),
  content: longText.describe('Source text; split into sentences with ids `<source id>:s<n>`.'),
});

export const ledgerEntry = z.object({
  concept: shortText.min(1).describe('Concept term as previously tracked; matched case-insensitively.'),
  attempts: z.number().int().min(0).max(1_000_000).default(0),
  correct: z.number().int().min(0).max(1_000_000).default(0),
  last_reviewed: dateTime.optional(),
  confidence: z.number().min(0).max(1).optional().describe('Self-rated confidence 0..1'),
});

export const learningMisconception = z.object({
  id: idText.optional(),
  concept: shortText.optional().describe('Concept the misconception is about, if known.'),
  belief: shortText.min(1).describe('What the learner wrongly believes.'),
  correction: shortText.optional(),
});

export const learningMasteryRequest = z.object({
  objective: shortText.min(1).describe('What the learner wants to master.'),
  surface: surfaceField,
  deadline: dateTime.optional().describe('ISO date-time of the exam or goal date.'),
  now: dateTime.optional().describe('Current date-time; required to express the review cadence as dates.'),
  timezone: z.string().max(64).optional().describe('IANA zone for the cadence, e.g. Europe/Berlin.'),
  sources: z.array(learningSource).min(1).max(MAX_ITEMS).describe('Study material.'),
  preferences: z
    .object({
      max_concepts: capField(200),
      max_flashcards: capField(500),
      max_quizzes: capField(200),
      max_drills: capField(200),
      max_sessions: capField(120),
      session_minutes: z.number().int().min(5).max(480).optional(),
      surfaces: stringList(20).optional().describe('Surfaces available for reinforcement, e.g. mobile, chat, email.'),
      assistance: z.enum(['auto', 'scaffolded', 'coached', 'independent']).optional(),
    })
    .default({}),
  existing_ledger: z
    .object({
      entries: z.array(ledgerEntry).max(MAX_ITEMS).default([]),
      streak_days: z.number().int().min(0).max(100_000).optional(),
    })
    .default({ entries: [] }),
  misconceptions: z.array(learningMisconception).max(1000).default([]),
});
export type LearningMasteryRequest = z.output<typeof learningMasteryRequest>;

const conceptNode = z.object({
  id: z.string(),
  term: z.string(),
  weight: z.number(),
  source_ids: z.array(z.string()),
  sentence_ids: z.array(z.string()),
});

export const learningMasteryResponse = z.object({
  summary: z.object({
    objective: z.string(),
    text: z.string(),
    source_count: z.number().int(),
    sentence_count: z.number().int(),
    concept_count: z.number().int(),
    top_concepts: z.array(z.string()),
    days_until_deadline: z.number().nullable(),
  }),
  source_sentences: z
    .array(z.object({ id: z.string(), source_id: z.string(), index: z.number().int(), text: z.string() }))
    .describe('Every sentence referenced elsewhere in the response.'),
  concept_graph: z.object({
    nodes: z.array(conceptNode),
    edges: z.array(z.object({ from: z.string(), to: z.string(), weight: z.number(), sentence_id: z.string() })),
  }),
  flashcards: z.array(
    z.object({
      id: z.string(),
      concept_id: z.string(),
      front: z.string(),
      back: z.string(),
      source_id: z.string(),
      sentence_id: z.string(),
    }),
  ),
  drills: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['define', 'connect', 'apply']),
      concept_ids: z.array(z.string()),
      prompt: z.string(),
      sentence_ids: z.array(z.string()),
    }),
  ),
  quizzes: z.array(
    z.object({
      id: z.string(),
      concept_id: z.string(),
      question: z.string(),
      choices: z.array(z.string()),
      answer_index: z.number().int(),
      source_id: z.string(),
      sentence_id: z.string(),
    }),
  ),
  mock_assessments: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      item_ids: z.array(z.string()),
      concept_ids: z.array(z.string()),
      minutes: z.number().int(),
      session_index: z.number().int().nullable(),
    }),
  ),
  misconception_map: z.array(
    z.object({
      id: z.string(),
      origin: z.enum(['reported', 'detected']),
      concept_id: z.string().nullable(),
      belief: z.string(),
      correction: z.string().nullable(),
      evidence_sentence_ids: z.array(z.string()),
      drill_ids: z.array(z.string()),
    }),
  ),
  review_cadence: z.object({
    mode: z.enum(['datetime', 'day_offset']),
    timezone: z.string().nullable(),
    sessions: z.array(
      z.object({
        index: z.number().int(),
        day_offset: z.number().int(),
        at: z.string().nullable(),
        minutes: z.number().int(),
        concept_ids: z.array(z.string()),
        flashcard_ids: z.array(z.string()),
      }),
    ),
  }),
  mastery_score: z.object({
    score: z.number().min(0).max(100),
    per_concept: z.array(
      z.object({ concept_id: z.string(), score: z.number(), attempts: z.number().int(), matched_ledger: z.boolean() }),
    ),
    factors: z.array(z.object({ name: z.string(), value: z.number(), weight: z.number() })),
  }),
  guided_assistance_mode: z.object({
    mode: z.enum(['scaffolded', 'coached', 'independent']),
    reason: z.string(),
    hint_policy: z.string(),
  }),
  learning_dag: z.object({
    nodes: z.array(z.string()).describe('Concept ids in study order.'),
    edges: z.array(z.object({ from: z.string(), to: z.string(), basis: z.enum(['explicit', 'first_use']) })),
    cycles: z.array(z.array(z.string())),
    removed_edges: z.array(z.object({ from: z.string(), to: z.string() })),
  }),
  cross_surface_reinforcement_hints: z.array(
    z.object({
      surface: z.string(),
      concept_ids: z.array(z.string()),
      action: z.string(),
      session_index: z.number().int().nullable(),
    }),
  ),
});
export type LearningMasteryResponse = z.input<typeof learningMasteryResponse>;
