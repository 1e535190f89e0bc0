import { z } from 'zod';
import { ChatCompletionResponse, Metadata } from './chat';
import { cursorListOf } from './common';

/** A completion's id as answered (`chatcmpl-...`); a stored message's id adds `-<index>`. */
export const ChatCompletionId = z
  .string()
  .regex(/^chatcmpl-[A-Za-z0-9_-]{1,100}$/, 'a chat completion id (chatcmpl-...)');
const MessageId = z.string().regex(/^chatcmpl-[A-Za-z0-9_-]{1,100}-\d{1,4}$/, 'a message id (<completion id>-<index>)');

const METADATA_KEY = /^metadata\[(.*)\]$/s;

/**
 * GET /v1/chat/completions: OpenAI's model filter, `metadata[key]=value` pairs (all must match), cursor and order
 * (oldest first by default, as OpenAI). Query keys other than these are ignored, as on every list.
 */
export const ListChatCompletionsQuery = z
  .looseObject({
    model: z.string().min(1).max(100).optional(),
    after: ChatCompletionId.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    order: z.enum(['asc', 'desc']).default('asc'),
  })
  .transform((q, ctx) => {
    const metadata: Record<string, string> = {};
    for (const [key, value] of Object.entries(q)) {
      const name = METADATA_KEY.exec(key)?.[1];
      if (name === undefined) continue;
      if (typeof value !== 'string') {
        ctx.addIssue({ code: 'custom', path: [key], message: 'give each metadata key once' });
        continue;
      }
      metadata[name] = value;
    }
    const checked = Metadata.safeParse(metadata);
    if (!checked.success)
      ctx.addIssue({ code: 'custom', path: ['metadata'], message: checked.error.issues[0]?.message ?? 'invalid' });
    return { model: q.model, after: q.after, limit: q.limit, order: q.order, metadata };
  })
  .meta({ id: 'ListChatCompletionsQuery' });

/** GET /v1/chat/completions/{id}/messages: cursor and order (oldest first by default, as OpenAI). */
export const ListStoredMessagesQuery = z.object({
  after: MessageId.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('asc'),
});

export const UpdateChatCompletionBody = z
  .object({ metadata: Metadata.describe('Replaces the stored metadata (an empty object clears it).') })
  .meta({ id: 'UpdateChatCompletionBody' });

export const StoredChatCompletion = ChatCompletionResponse.extend({
  metadata: z.record(z.string(), z.string()),
  request_id: z.string().optional().describe('The X-Request-ID of the request that made it.'),
}).meta({ id: 'StoredChatCompletion' });

export const ChatCompletionList = cursorListOf(StoredChatCompletion, 'ChatCompletionList');

export const StoredChatMessage = z
  .object({
    id: z.string(),
    role: z.string(),
    content: z.string().nullable().describe('The text (of its text parts, joined by newlines, when sent as parts).'),
    name: z.string().nullable(),
    content_parts: z.array(z.record(z.string(), z.unknown())).nullable().describe('The parts, when sent as parts.'),
    tool_calls: z.array(z.record(z.string(), z.unknown())).optional(),
    tool_call_id: z.string().optional(),
  })
  .meta({ id: 'StoredChatMessage' });

export const ChatCompletionMessageList = cursorListOf(StoredChatMessage, 'ChatCompletionMessageList');

export const ChatCompletionDeleted = z
  .object({ object: z.literal('chat.completion.deleted'), id: z.string(), deleted: z.literal(true) })
  .meta({ id: 'ChatCompletionDeleted' });
