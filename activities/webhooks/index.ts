import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { WebhookEvent } from '../../schema/webhook-events';
import type { ActivityDeps } from '../deps';
import { webhookDelivery, webhookTargets } from '../store/webhooks';
import { StepPermanentError } from '../tasks/errors';
import { safeFetch } from '../tasks/safe-fetch';

/**
 * Standard Webhooks' signature (what OpenAI's SDK `webhooks.unwrap` verifies): `v1,` and the base64 HMAC-SHA256, keyed
 * by the secret's bytes (the base64 after `whsec_`), of `<id>.<timestamp>.<body>`.
 */
export function signWebhookEvent(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function createWebhookActivities(deps: ActivityDeps) {
  const { db, config, log } = deps;
  return {
    /** The tenant's endpoints that take this event type (none: nothing is started). */
    async webhookTargets(i: { tenantId: string; type: string }): Promise<string[]> {
      return webhookTargets(db, i.tenantId, i.type);
    },

    /**
     * POSTs one event to one endpoint, signed, through the fetch guard, not following redirects, within 10 s. A 2xx is
     * delivered; a 408, 429, 5xx or a network fault is retried by Temporal with backoff; any other answer (the
     * receiver refuses it) and an endpoint deleted meanwhile end the delivery.
     */
    async deliverWebhook(i: { tenantId: string; endpointId: string; event: WebhookEvent }): Promise<string> {
      const target = await webhookDelivery(db, i.tenantId, i.endpointId);
      if (!target) return 'endpoint deleted';
      const body = JSON.stringify(i.event);
      const timestamp = Math.floor(Date.now() / 1000);
      let status: number;
      try {
        const res = await safeFetch(target.url, {
          allowPrivate: config.allowPrivateFetch,
          method: 'POST',
          body,
          headers: {
            'content-type': 'application/json',
            'webhook-id': i.event.id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signWebhookEvent(target.secret, i.event.id, timestamp, body),
          },
          maxBytes: 16 * 1024,
          timeoutMs: 10_000,
          maxRedirects: 0,
        });
        status = res.status;
      } catch (err) {
        // Refused by the fetch guard (a private address, a bad URL) or redirected: no retry can change that.
        if (err instanceof StepPermanentError)
          throw ApplicationFailure.nonRetryable(`Webhook ${i.endpointId}: ${err.message}`, 'webhook_refused');
        throw err;
      }
      log.info({ endpoint: i.endpointId, event: i.event.type, status }, 'webhook delivered');
      if (status >= 200 && status < 300) return `delivered (HTTP ${status})`;
      if (status === 408 || status === 429 || status >= 500)
        throw ApplicationFailure.retryable(
          `Webhook ${i.endpointId} answered HTTP ${status}; will retry.`,
          'webhook_retry',
        );
      throw ApplicationFailure.nonRetryable(`Webhook ${i.endpointId} answered HTTP ${status}.`, 'webhook_refused');
    },
  };
}
