import type { z } from 'zod';
import type { RuntimeScope } from '../schema/auth';
import type { Surface } from '../schema/surfaces';
import type { AppContext } from './context';

/**
 * Who may call a route:
 * - `{ scope }`: a runtime (or legacy) key holding that scope;
 * - `key`: any runtime or legacy key (no particular scope);
 * - `bootstrap`: a bootstrap key (`agb.`), checked by the handler against the app it mints for;
 * - `token`: the registration token (POST /v1/app/register);
 * - `public`: nobody needs a credential.
 */
export type Access = { scope: RuntimeScope } | 'key' | 'bootstrap' | 'token' | 'public';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteInput<B, Q, P, H = Record<string, unknown>> {
  body: B;
  query: Q;
  params: P;
  /** The declared request headers, parsed (lower-case names). */
  headers: H;
}

export interface RouteSpec<
  B extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
  H extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** Koa path, e.g. `/v1/tasks/:id`. */
  path: string;
  access: Access;
  summary: string;
  tags: string[];
  body?: B;
  /**
   * A checked reader of the body (schema/chat-read.ts): the value `body` gives for the bodies it
   * handles, undefined for anything else, which then goes through `body` (so errors stay the schema's).
   */
  readBody?: (value: unknown) => z.output<B> | undefined;
  query?: Q;
  params?: P;
  /** Request headers the route reads (`schema/headers.ts`), validated like the body; 400 names `headers.<name>`. */
  headers?: H;
  /** A checked reader of the headers, as `readBody` is of the body (undefined: parse with `headers`). */
  readHeaders?: (headers: Record<string, unknown>) => z.output<H> | undefined;
  /**
   * Stripe-style `Idempotency-Key` support (api/idempotency.ts): a retry with the same key and body
   * gets the stored answer without running the handler again. Implies the Idempotency-Key header.
   */
  idempotent?: boolean;
  /** Response schema for the OpenAPI document (status `status`). */
  response?: z.ZodType;
  /** Other documented statuses with their meaning. */
  responses?: Record<number, string>;
  status?: number;
  /** Request example for the OpenAPI document. */
  example?: unknown;
  /** Surfaces X-Svc-Context may pick here beyond the general ones (spec: `learn` only on the mastery compiler). */
  surfaces?: readonly Surface[];
  /** Response media type when not JSON (e.g. `text/event-stream`, `text/html`). */
  produces?: string[];
  /** Request media type when not JSON (e.g. `multipart/form-data`); the handler reads the body itself. */
  consumes?: string;
  /**
   * A model call: rate limits and budgets apply, x-ratelimit-* headers and usage are recorded. `admission`: limits
   * and budgets apply and the headers are sent, but the request is no model call of its own (a batch: its worker
   * records each request's usage and charges its tokens to the windows admitted here).
   */
  metered?: boolean | 'admission';
  /** The body is a conversation (OpenAI chat messages): SVC_CHAT_BODY_LIMIT applies instead of SVC_BODY_LIMIT. */
  conversation?: boolean;
  handler: (
    ctx: AppContext,
    input: RouteInput<z.output<B>, z.output<Q>, z.output<P>, z.output<H>>,
  ) => Promise<unknown> | unknown;
}

/** Keeps the schema generics while declaring a route. */
export function defineRoute<
  B extends z.ZodType,
  Q extends z.ZodType,
  P extends z.ZodType,
  H extends z.ZodType = z.ZodType,
>(spec: RouteSpec<B, Q, P, H>): RouteSpec {
  return spec as unknown as RouteSpec;
}
