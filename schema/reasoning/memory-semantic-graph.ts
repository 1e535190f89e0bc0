import { z } from 'zod';
import {
  MAX_ITEMS,
  capField,
  dateTime,
  idText,
  integrationHint,
  longText,
  shortText,
  stringList,
  surfaceField,
} from './common';

/** Cap on the sum of `items[].text` lengths. */
export const MAX_TOTAL_TEXT = 600_000;

/** POST /v1/memory/semantic/graph (path-only in the spec; shape designed here). */
export const memoryItem = z.object({
  id: idText,
  text: longText.describe('Memory text; entities, concepts and relations are read from it.'),
  tags: stringList(50).optional(),
  kind: shortText.optional().describe('fact, preference, event, note, ...'),
  time: dateTime.optional(),
});

export const memorySemanticGraphRequest = z.object({
  surface: surfaceField,
  intent: shortText.optional(),
  items: z
    .array(memoryItem)
    .min(1)
    .max(MAX_ITEMS)
    // Work grows with the total text (every sentence's candidate terms are counted), so the total is
    // capped too: the worst request stays near 500 ms of compile time on the API's event loop.
    .refine((items) => items.reduce((n, it) => n + it.text.length, 0) <= MAX_TOTAL_TEXT, {
      message: `the items' texts may total at most ${MAX_TOTAL_TEXT} characters`,
    })
    .describe(`Memory items to connect (their texts together at most ${MAX_TOTAL_TEXT} characters).`),
  preferences: z
    .object({
      // Caps keep the worst request (1 MiB of text) near 500 ms of compile time on the API's event loop.
      max_nodes: capField(500).describe('At most this many nodes (default 50, at most 500).'),
      max_edges: capField(2000).describe('At most this many edges (default 4 × max_nodes, at most 2000).'),
      include_tags: z.boolean().optional().describe('Add tag nodes (default true).'),
    })
    .default({}),
});
export type MemorySemanticGraphRequest = z.output<typeof memorySemanticGraphRequest>;

export const relationType = z.enum([
  'is_a',
  'part_of',
  'works_at',
  'located_in',
  'uses',
  'depends_on',
  'prefers',
  'tagged',
  'co_occurs',
]);

export const memorySemanticGraphResponse = z.object({
  nodes: z.array(
    z.object({
      id: z.string(),
      label: z.string(),
      kind: z.enum(['entity', 'concept', 'tag']),
      weight: z.number(),
      item_ids: z.array(z.string()),
      cluster_id: z.string(),
    }),
  ),
  edges: z.array(
    z.object({
      id: z.string(),
      from: z.string(),
      to: z.string(),
      type: relationType,
      weight: z.number(),
      evidence_item_ids: z.array(z.string()),
    }),
  ),
  clusters: z.array(
    z.object({ id: z.string(), label: z.string(), node_ids: z.array(z.string()), item_count: z.number().int() }),
  ),
  unlinked_item_ids: z.array(z.string()).describe('Items that produced no node within the cap.'),
  stats: z.object({
    items: z.number().int(),
    candidate_nodes: z.number().int(),
    dropped_nodes: z.number().int(),
    typed_edges: z.number().int(),
  }),
  integration_hints: z.array(integrationHint),
});
export type MemorySemanticGraphResponse = z.input<typeof memorySemanticGraphResponse>;
