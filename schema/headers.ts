import { z } from 'zod';
import { SessionId } from './chat';

// Request headers the API reads, declared on each route (`RouteSpec.headers`) and parsed by zod
// beside body, query and params: one place validates them, and the OpenAPI document lists them.
// Keys are lower-case (Node lower-cases incoming header names). Authorization and X-Svc-Context
// are read by the auth middleware.

const blank = (v: unknown) =>
  typeof v === 'string' && v.trim() === '' ? undefined : typeof v === 'string' ? v.trim() : v;

export const sessionIdHeader = z
  .preprocess(blank, SessionId.optional())
  .describe('Client-generated session id: when present the exchange is stored and the session continued.');

/** Comma-separated builtin skill ids, merged into svc_skills.enabled. */
export const skillHeader = z
  .preprocess(blank, z.string().max(2000).optional())
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .describe('Comma-separated builtin skill ids merged into svc_skills.enabled.');

/** IANA zone; an unknown one is ignored (UTC), as the spec asks nothing stricter. */
export const timezoneHeader = z
  .preprocess(blank, z.string().max(100).optional())
  .describe('IANA timezone name for temporal reasoning.');

export const lastEventIdHeader = z
  .preprocess(
    blank,
    z
      .string()
      .regex(/^\d{1,15}$/, 'must be an event id (a non-negative integer)')
      .optional(),
  )
  .transform((v) => (v === undefined ? undefined : Number(v)))
  .describe('Resume a stream after this event id (what EventSource sends on reconnect).');

export const idempotencyKeyHeader = z
  .preprocess(
    blank,
    z
      .string()
      .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 printable ASCII characters')
      .optional(),
  )
  .describe('Retry-safe create: the same key and body get the first answer again.');

export const ChatHeaders = z.object({
  'x-session-id': sessionIdHeader,
  'x-svc-skill': skillHeader,
  'x-timezone': timezoneHeader,
});
export type ChatHeaders = z.output<typeof ChatHeaders>;

export const ResumeHeaders = z.object({ 'last-event-id': lastEventIdHeader });
export const IdempotencyHeaders = z.object({ 'idempotency-key': idempotencyKeyHeader });

/** A sovereign tick's headers: the Idempotency-Key, and `Prefer` (documented; read by `prefersMinimal`). */
export const TickHeaders = IdempotencyHeaders.extend({
  prefer: z
    .string()
    .optional()
    .describe('RFC 7240 preferences; `return=minimal` answers without `plan` (ignored with an Idempotency-Key).'),
});

/**
 * Whether a `Prefer` header (RFC 7240) asks for `return=minimal`. Preferences are comma-separated
 * (several headers arrive joined the same way), the name and this value compare case-insensitively,
 * the value may be quoted, parameters after `;` are ignored, and the first `return` given counts.
 * Anything else (no header, `return=representation`, other preferences) asks for nothing here.
 */
export function prefersMinimal(prefer: string | undefined): boolean {
  if (!prefer) return false;
  for (const part of prefer.split(',')) {
    const m = /^\s*return\s*=\s*("?)([^";\s]*)\1\s*(?:;|$)/i.exec(part);
    if (m) return m[2].toLowerCase() === 'minimal';
  }
  return false;
}
