import { TypedSearchAttributes } from '@temporalio/common';
import { z } from 'zod';
import { randomToken } from '../../activities/store/ids';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  webhookTargets,
  type WebhookEndpointRow,
} from '../../activities/store/webhooks';
import { checkUrl } from '../../activities/net/ssrf';
import { AppError, notFound } from '../../schema/errors';
import {
  CreateWebhookEndpointBody,
  DeletedWebhookEndpoint,
  MAX_WEBHOOK_ENDPOINTS,
  WebhookEndpoint,
  WebhookEndpointId,
  WebhookEndpointList,
} from '../../schema/webhooks';
import { webhookEventStart } from '../../schema/webhook-events';
import { principalOf, type AppContext } from '../context';
import { cursorPage } from '../list-page';
import { defineRoute, type RouteSpec } from '../route';

const access = { scope: 'runtime:chat' } as const;
const tags = ['webhooks'];
const IdParams = z.object({ id: WebhookEndpointId });
const unknownEndpoint = () => notFound('Webhook endpoint');

const endpointObject = (r: WebhookEndpointRow, secret?: string) => ({
  id: r.id,
  object: 'webhook_endpoint' as const,
  url: r.url,
  events: r.events,
  created_at: r.created_at,
  ...(secret !== undefined ? { secret } : {}),
});

/**
 * An event from the API itself (a batch that failed when it was created: no workflow of its own ends it): delivered
 * by the same workflow the jobs start. A failure to start it is logged, not the request's failure.
 */
export async function emitWebhookEventFromApi(ctx: AppContext, tenantId: string, type: string, id: string) {
  try {
    const endpoints = await webhookTargets(ctx.deps.db, tenantId, type);
    if (!endpoints.length) return;
    const start = webhookEventStart({
      eventId: `evt_${randomToken(24)}`,
      tenantId,
      type,
      id,
      endpoints,
      nowMs: Date.now(),
    });
    await ctx.deps.temporal.client.workflow.start('webhookEventWorkflow', {
      taskQueue: ctx.deps.config.temporal.taskQueue,
      workflowId: start.workflowId,
      args: start.args,
      typedSearchAttributes: new TypedSearchAttributes(start.searchAttributes),
    });
  } catch (err) {
    ctx.deps.log.warn({ err: (err as Error).message, event: type, id }, 'webhook event not started');
  }
}

/** Webhook endpoints: where the tenant's background responses and batches say they ended, signed as OpenAI signs. */
export function webhookRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhooks',
      access,
      tags,
      summary:
        "Add a webhook endpoint (url, events): background responses and batches POST OpenAI's events to it as they end, signed with Standard Webhooks (the secret is in this answer only; OpenAI's SDK webhooks.unwrap verifies them).",
      body: CreateWebhookEndpointBody,
      response: WebhookEndpoint,
      responses: { 409: `The tenant has ${MAX_WEBHOOK_ENDPOINTS} endpoints already.` },
      example: { url: 'https://example.com/hooks/svc', events: ['response.completed', 'batch.completed'] },
      handler: async (ctx: AppContext, { body }) => {
        // What the fetch guard will refuse at every delivery is refused now (a private or local address, unless
        // SVC_ALLOW_PRIVATE_FETCH allows it); a name that resolves to one is refused by the guard when delivering.
        checkUrl(body.url, {
          allowPrivate: ctx.deps.config.allowPrivateFetch,
          refuseLocalNames: true,
          makeError: (r) => {
            const why =
              r.reason === 'private-address' || r.reason === 'local-name'
                ? `events are not sent to private or local addresses (${r.host}) unless SVC_ALLOW_PRIVATE_FETCH allows it`
                : r.reason === 'credentials'
                  ? 'a URL with a user name or password is not taken'
                  : 'an http(s) URL';
            return new AppError('invalid_request', `url: ${why}.`, { details: [{ path: 'body.url', message: why }] });
          },
        });
        const made = await createWebhookEndpoint(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          url: body.url,
          events: [...new Set(body.events ?? [])],
          max: MAX_WEBHOOK_ENDPOINTS,
        });
        if ('full' in made)
          throw new AppError(
            'conflict',
            `You have ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints, the most there may be; delete one you no longer use.`,
          );
        return endpointObject(made, made.secret);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks',
      access,
      tags,
      summary: "The tenant's webhook endpoints (their secrets are never shown again).",
      response: WebhookEndpointList,
      handler: async (ctx: AppContext) => {
        const rows = await listWebhookEndpoints(ctx.deps.db, principalOf(ctx).tenantId);
        return cursorPage(rows, rows.length, (r) => endpointObject(r));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks/:id',
      access,
      tags,
      summary: 'A webhook endpoint of the tenant.',
      params: IdParams,
      response: WebhookEndpoint,
      handler: async (ctx: AppContext, { params }) => {
        const row = await getWebhookEndpoint(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!row) throw unknownEndpoint();
        return endpointObject(row);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhooks/:id',
      access,
      tags,
      summary: 'Deletes a webhook endpoint (events not yet delivered to it are dropped).',
      params: IdParams,
      response: DeletedWebhookEndpoint,
      handler: async (ctx: AppContext, { params }) => {
        if (!(await deleteWebhookEndpoint(ctx.deps.db, principalOf(ctx).tenantId, params.id))) throw unknownEndpoint();
        return { id: params.id, object: 'webhook_endpoint.deleted' as const, deleted: true as const };
      },
    }),
  ];
}
