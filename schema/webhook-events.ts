import { SvcKind, SvcTenant } from '../workflows/search-attributes';

// No zod here: the workflow sandbox imports this file.

/** An event as OpenAI sends it to a webhook endpoint: only the object's id; the receiver reads the rest. */
export interface WebhookEvent {
  id: string;
  object: 'event';
  created_at: number;
  type: string;
  data: { id: string };
}

/**
 * What the delivery workflow of one event (`webhook-<event id>`) is started with, from a job's workflow or from the
 * API alike: its id, input and search attributes (pure: the workflow bundle uses it).
 */
export function webhookEventStart(o: {
  eventId: string;
  tenantId: string;
  type: string;
  id: string;
  endpoints: string[];
  nowMs: number;
}) {
  const event: WebhookEvent = {
    id: o.eventId,
    object: 'event',
    created_at: Math.floor(o.nowMs / 1000),
    type: o.type,
    data: { id: o.id },
  };
  return {
    workflowId: `webhook-${o.eventId}`,
    args: [{ tenantId: o.tenantId, event, endpoints: o.endpoints }] as [
      { tenantId: string; event: WebhookEvent; endpoints: string[] },
    ],
    searchAttributes: [
      { key: SvcTenant, value: o.tenantId },
      { key: SvcKind, value: 'webhook' },
    ],
  };
}
