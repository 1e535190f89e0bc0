import { addEntityEvent, getEntity, listEntities, upsertEntity } from '../../activities/store/entities';
import {
  EntityEvent,
  EntityEventBody,
  EntityGetQuery,
  EntityIdParams,
  EntityList,
  EntityListQuery,
  EntityUpsertBody,
  EntityUpsertResult,
  EntityWithEvents,
} from '../../schema/entities';
import { notFound } from '../../schema/errors';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

const access = 'key' as const;
const tags = ['entities'];

/** The entity history store: named real-world things and the events recorded about them. */
export function entitiesRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/entities',
      access,
      tags,
      summary: 'Upsert an entity: by id, else by a case-insensitive name (then alias) match, else create (201).',
      body: EntityUpsertBody,
      response: EntityUpsertResult,
      responses: { 201: 'Created a new entity (200 when an existing one was updated).' },
      example: { name: 'Acme Ltd', kind: 'vendor', aliases: ['ACME', 'Acme Limited'] },
      handler: async (ctx: AppContext, { body }) => {
        const result = await upsertEntity(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, body });
        ctx.status = result.created ? 201 : 200;
        ctx.body = result;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/entities',
      access,
      tags,
      summary: 'List or search entities (search matches name and aliases, case-insensitive, best match first).',
      query: EntityListQuery,
      response: EntityList,
      handler: async (ctx: AppContext, { query }) => ({
        data: await listEntities(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          search: query.search,
          kind: query.kind,
          limit: query.limit,
        }),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/entities/:id',
      access,
      tags,
      summary: 'An entity with its newest events (event_limit, default 1000, the max: the full history).',
      params: EntityIdParams,
      query: EntityGetQuery,
      response: EntityWithEvents,
      handler: async (ctx: AppContext, { params, query }) => {
        const entity = await getEntity(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          id: params.id,
          eventLimit: query.event_limit,
        });
        if (!entity) throw notFound('Entity');
        return entity;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/entities/:id/events',
      access,
      tags,
      summary: "Record an event on an entity (occurred_at defaults to now; task_id must be the tenant's task).",
      params: EntityIdParams,
      body: EntityEventBody,
      response: EntityEvent,
      status: 201,
      example: { kind: 'invoice', content: 'Invoice #42, 120 EUR', metadata: { amount: '120' } },
      handler: (ctx: AppContext, { params, body }) =>
        addEntityEvent(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, entityId: params.id, body }),
    }),
  ];
}
