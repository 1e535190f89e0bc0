import { z } from 'zod';
import {
  addConversationItems,
  createConversation,
  deleteConversation,
  deleteConversationItem,
  getConversation,
  getConversationItem,
  listConversationItems,
  updateConversation,
  type ConversationRow,
} from '../../activities/store/conversations';
import {
  AddConversationItemsBody,
  ConversationId,
  ConversationItemId,
  ConversationItemList,
  ConversationItemsQuery,
  ConversationObject,
  CreateConversationBody,
  DeletedConversation,
  UpdateConversationBody,
} from '../../schema/conversations';
import { notFound } from '../../schema/errors';
import type { ResponseInputItem } from '../../schema/responses';
import { principalOf, type AppContext } from '../context';
import { cursorPage, unknownCursor } from '../list-page';
import { defineRoute, type RouteSpec } from '../route';
import { tenantFiles } from './chat-parts';
import { normalizeInput, readInputFiles, type StoredItem } from './responses-items';
import { compactionSummaries } from './responses-compaction';

const access = { scope: 'runtime:chat' } as const;
const tags = ['chat'];
const IdParams = z.object({ id: ConversationId });
const ItemParams = z.object({ id: ConversationId, item_id: ConversationItemId });
const unknownConversation = () => notFound('Conversation');

const conversationObject = (c: ConversationRow) => ({
  id: c.id,
  object: 'conversation' as const,
  created_at: c.created_at,
  metadata: c.metadata,
});

/**
 * A request's items as a conversation keeps them: ids given, files read into text, images by file id as data;
 * compaction items checked to be this service's for this tenant.
 */
async function readItems(ctx: AppContext, items: ResponseInputItem[]): Promise<StoredItem[]> {
  const tenantId = principalOf(ctx).tenantId;
  const input = normalizeInput(items);
  await readInputFiles(input, ctx.deps.config, tenantFiles(ctx.deps.db, tenantId), 'body.items');
  await compactionSummaries(
    ctx.deps.db,
    tenantId,
    input.items,
    (k) => `body.items.${input.origin[k]}.encrypted_content`,
  );
  return input.items;
}

/** A page of items as OpenAI lists them. */
const itemList = (rows: unknown[], limit: number) => cursorPage(rows as Array<{ id: string }>, limit, (i) => i);

/** OpenAI's Conversations API: a tenant's conversations, whose items responses read and extend (`conversation`). */
export function conversationRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/conversations',
      access,
      tags,
      summary:
        'Create a conversation (metadata, up to 20 first items); POST /v1/responses with conversation reads its items and adds its own.',
      body: CreateConversationBody,
      response: ConversationObject,
      handler: async (ctx: AppContext, { body }) => {
        const items = body.items ? await readItems(ctx, body.items) : [];
        const c = await createConversation(ctx.deps.db, principalOf(ctx).tenantId, body.metadata ?? {}, items);
        return conversationObject(c);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/conversations/:id',
      access,
      tags,
      summary: 'A conversation of the tenant.',
      params: IdParams,
      response: ConversationObject,
      handler: async (ctx: AppContext, { params }) => {
        const c = await getConversation(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!c) throw unknownConversation();
        return conversationObject(c);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id',
      access,
      tags,
      summary: "Replace a conversation's metadata.",
      params: IdParams,
      body: UpdateConversationBody,
      response: ConversationObject,
      handler: async (ctx: AppContext, { params, body }) => {
        const c = await updateConversation(ctx.deps.db, principalOf(ctx).tenantId, params.id, body.metadata);
        if (!c) throw unknownConversation();
        return conversationObject(c);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/conversations/:id',
      access,
      tags,
      summary: 'Delete a conversation and its items (responses made in it stay).',
      params: IdParams,
      response: DeletedConversation,
      handler: async (ctx: AppContext, { params }) => {
        if (!(await deleteConversation(ctx.deps.db, principalOf(ctx).tenantId, params.id))) throw unknownConversation();
        return { id: params.id, object: 'conversation.deleted' as const, deleted: true as const };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/conversations/:id/items',
      access,
      tags,
      summary: "A conversation's items, newest first by default (limit, order, after as OpenAI's).",
      params: IdParams,
      query: ConversationItemsQuery,
      response: ConversationItemList,
      handler: async (ctx: AppContext, { params, query }) => {
        const rows = await listConversationItems(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          id: params.id,
          order: query.order,
          after: query.after,
          limit: query.limit,
        });
        if (rows === null) throw unknownConversation();
        if (rows === 'badCursor') throw unknownCursor(query.after!, 'item', 'in this conversation');
        return itemList(rows, query.limit);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/items',
      access,
      tags,
      summary: 'Add up to 20 items after the last; answers the items as added.',
      params: IdParams,
      body: AddConversationItemsBody,
      response: ConversationItemList,
      handler: async (ctx: AppContext, { params, body }) => {
        const items = await readItems(ctx, body.items);
        if (!(await addConversationItems(ctx.deps.db, principalOf(ctx).tenantId, params.id, items)))
          throw unknownConversation();
        return itemList(items, items.length);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/conversations/:id/items/:item_id',
      access,
      tags,
      summary: 'One item of a conversation.',
      params: ItemParams,
      handler: async (ctx: AppContext, { params }) => {
        const item = await getConversationItem(ctx.deps.db, principalOf(ctx).tenantId, params.id, params.item_id);
        if (item === null) throw notFound('Conversation item');
        return item;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/conversations/:id/items/:item_id',
      access,
      tags,
      summary: 'Delete one item of a conversation; answers the conversation.',
      params: ItemParams,
      response: ConversationObject,
      handler: async (ctx: AppContext, { params }) => {
        const tenantId = principalOf(ctx).tenantId;
        if (!(await deleteConversationItem(ctx.deps.db, tenantId, params.id, params.item_id)))
          throw notFound('Conversation item');
        const c = await getConversation(ctx.deps.db, tenantId, params.id);
        if (!c) throw unknownConversation();
        return conversationObject(c);
      },
    }),
  ];
}
