import { createHmac } from 'node:crypto';
import { cutText } from '../../schema/snippet';
import { storableText } from '../../schema/storable';
import { StepPermanentError } from './errors';
import { safeFetch } from './safe-fetch';
import type { PrivateFetchPolicy } from '../net/ssrf';

export const SIGNATURE_HEADER = 'x-svc-signature';
export const TIMESTAMP_HEADER = 'x-svc-timestamp';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, the Stripe-style scheme receivers know. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * POSTs a JSON payload with an HMAC signature and an idempotency key (run + step, so a receiver
 * can drop the duplicates a retry may cause). 2xx = done; 408, 429 and 5xx and network faults
 * throw a retryable error (Temporal retries with backoff); other 4xx are permanent.
 */
export async function postWebhook(opts: {
  url: string;
  secret: string;
  payload: unknown;
  idempotencyKey: string;
  allowPrivate: PrivateFetchPolicy;
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(opts.payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await safeFetch(opts.url, {
    allowPrivate: opts.allowPrivate,
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      [TIMESTAMP_HEADER]: timestamp,
      [SIGNATURE_HEADER]: signWebhook(opts.secret, timestamp, body),
      [IDEMPOTENCY_HEADER]: opts.idempotencyKey,
    },
    maxBytes: 64 * 1024,
    timeoutMs: opts.timeoutMs ?? 10_000,
    maxRedirects: 0,
    signal: opts.signal,
  });
  // The receiver's bytes, kept in the step's result or error: NUL (a binary answer) made storable.
  const text = storableText(res.body.toString('utf8'));
  if (res.status >= 200 && res.status < 300) return { status: res.status, body: text };
  if (res.status === 408 || res.status === 429 || res.status >= 500) {
    throw new Error(`Webhook answered HTTP ${res.status}; will retry.`);
  }
  throw new StepPermanentError(`Webhook answered HTTP ${res.status}: ${cutText(text, 200)}`);
}
