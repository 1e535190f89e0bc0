import { z } from 'zod';
import { cursorListOf } from './common';

/** The events a webhook endpoint can be sent (OpenAI's, for the jobs this service runs in the background). */
export const WEBHOOK_EVENTS = [
  'response.completed',
  'response.incomplete',
  'response.failed',
  'response.cancelled',
  'batch.completed',
  'batch.failed',
  'batch.cancelled',
  'batch.expired',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Endpoints one tenant may have. */
export const MAX_WEBHOOK_ENDPOINTS = 10;

export const WebhookEndpointId = z.string().regex(/^whep_[A-Za-z0-9]{1,100}$/, 'a webhook endpoint id (whep_...)');

export const CreateWebhookEndpointBody = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'an http(s) URL' })
      .max(2048)
      .describe('Where events are POSTed (through the fetch guard; redirects are not followed).'),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .max(WEBHOOK_EVENTS.length)
      .optional()
      .describe('The events to send; every event when left out or empty.'),
  })
  .meta({ id: 'CreateWebhookEndpointBody' });

export const WebhookEndpoint = z
  .object({
    id: z.string(),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    events: z.array(z.string()),
    created_at: z.number().int(),
    secret: z
      .string()
      .optional()
      .describe('The signing secret (whsec_...), in the answer to the creation only: keep it to verify events.'),
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointList = cursorListOf(WebhookEndpoint, 'WebhookEndpointList');

export const DeletedWebhookEndpoint = z
  .object({ id: z.string(), object: z.literal('webhook_endpoint.deleted'), deleted: z.literal(true) })
  .meta({ id: 'DeletedWebhookEndpoint' });
