import { z } from 'zod';
import { nullable } from './chat';
import { ConversationId, InputItem, InputItemsQuery, itemListOf, Metadata } from './responses';

export { ConversationId };

/** Items one request may add to a conversation (OpenAI's limit). */
export const MAX_CONVERSATION_ITEMS = 20;

export const ConversationItemId = z.string().min(1).max(200);

export const CreateConversationBody = z
  .object({
    metadata: nullable(Metadata),
    items: nullable(z.array(InputItem).max(MAX_CONVERSATION_ITEMS)).describe(
      'Items the conversation starts with (messages, function calls and their outputs), at most 20.',
    ),
  })
  .meta({ id: 'CreateConversationBody' });

export const UpdateConversationBody = z.object({ metadata: Metadata }).meta({ id: 'UpdateConversationBody' });

export const AddConversationItemsBody = z
  .object({ items: z.array(InputItem).min(1).max(MAX_CONVERSATION_ITEMS) })
  .meta({ id: 'AddConversationItemsBody' });

/** As a response's input items are listed (limit, order, after). */
export const ConversationItemsQuery = InputItemsQuery;

export const ConversationObject = z
  .object({
    id: z.string(),
    object: z.literal('conversation'),
    created_at: z.number().int(),
    metadata: z.record(z.string(), z.string()),
  })
  .meta({ id: 'Conversation' });

export const DeletedConversation = z
  .object({ id: z.string(), object: z.literal('conversation.deleted'), deleted: z.literal(true) })
  .meta({ id: 'DeletedConversation' });

export const ConversationItemList = itemListOf('ConversationItemList');
