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

const messageText = z.string().max(4000);

export const harvestMessage = z.object({
  id: idText.optional().describe('Caller id of the message; defaults to m<index>.'),
  speaker: shortText.optional().describe('Who said it; used as the owner of first-person commitments.'),
  text: messageText.describe('Message text.'),
  time: dateTime.optional().describe('ISO date-time of the message; base for relative due dates.'),
  tags: stringList(50).optional(),
});

export const conversationHarvestRequest = z
  .object({
    surface: surfaceField,
    title: shortText.optional(),
    intent: shortText.optional().describe('Why the conversation is harvested (e.g. "meeting follow-up").'),
    transcript: longText
      .optional()
      .describe('Plain transcript, one "Speaker: text" line per turn; appended after messages[].'),
    participants: stringList(200).optional().describe('Known participant names; helps detect "Name will ..." owners.'),
    context_links: stringList(100).optional(),
    messages: z.array(harvestMessage).max(MAX_ITEMS).optional(),
    now: dateTime.optional().describe('Request clock (ISO); base for relative due dates when a message has no time.'),
    timezone: z
      .string()
      .max(64)
      .optional()
      .describe('IANA time zone for reading times without offset and resolving dates.'),
    preferences: z
      .object({
        max_items: capField(500).describe('Cap per list (decisions, commitments, threads); default 50.'),
        max_packets: capField(100).describe('Cap on follow-up packets; default 5.'),
        max_seeds: capField(100).describe('Cap on memory seeds; default 8.'),
      })
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (!(v.messages && v.messages.length > 0) && !(v.transcript && v.transcript.trim())) {
      ctx.addIssue({ code: 'custom', path: ['messages'], message: 'messages[] or transcript is required' });
    }
  });

const source = z.object({
  message_index: z
    .number()
    .int()
    .min(0)
    .describe('Index in the combined message list (messages[] then transcript lines).'),
  message_id: z.string(),
  speaker: z.string().nullable(),
});

const due = z.object({
  hint: z.string().describe('Due phrase as written.'),
  date: z.string().nullable(),
  at: z.string().nullable(),
  basis: z.enum(['absolute', 'message_time', 'request_now']).nullable(),
});

export const conversationHarvestResponse = z.object({
  summary: z.object({
    title: z.string(),
    message_count: z.number().int(),
    speakers: z.array(z.string()),
    decision_count: z.number().int(),
    commitment_count: z.number().int(),
    unresolved_count: z.number().int(),
    truncated: z.boolean(),
  }),
  decisions: z.array(
    z.object({
      id: z.string(),
      text: z.string(),
      rule: z.string(),
      source,
      confirms_index: z.number().int().nullable(),
    }),
  ),
  commitments: z.array(
    z.object({
      id: z.string(),
      owner: z.string(),
      action: z.string(),
      due: due.nullable(),
      rule: z.string(),
      source,
      accepted_from_index: z.number().int().nullable(),
    }),
  ),
  unresolved_threads: z.array(
    z.object({
      id: z.string(),
      question: z.string(),
      asked_by: z.string().nullable(),
      addressed_to: z.string().nullable(),
      keywords: z.array(z.string()),
      messages_since: z.number().int(),
      source,
    }),
  ),
  follow_up_packets: z.array(
    z.object({
      id: z.string(),
      owner: z.string(),
      commitment_ids: z.array(z.string()),
      thread_ids: z.array(z.string()),
      earliest_due: z.string().nullable(),
      draft: z.string(),
    }),
  ),
  memory_seeds: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['decision', 'topic', 'commitment']),
      text: z.string(),
      weight: z.number(),
      source_message_ids: z.array(z.string()),
    }),
  ),
  integration_hints: z.array(integrationHint),
});

export type ConversationHarvestRequest = z.output<typeof conversationHarvestRequest>;
export type ConversationHarvestResponse = z.input<typeof conversationHarvestResponse>;
