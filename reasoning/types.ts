import type { z } from 'zod';

/**
 * One structured-reasoning endpoint: a pure, deterministic compiler plus the zod
 * contracts that validate its request and describe its response. The API layer
 * mounts every entry of `reasoning/registry.ts` at `POST /v1<path>` and publishes
 * the schemas and example in the OpenAPI document.
 */
export interface ReasoningEndpoint<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** Path relative to /v1, e.g. `/temporal/coordinate`. */
  path: string;
  /** One-line summary for the OpenAPI document. */
  summary: string;
  request: Req;
  response: Res;
  /**
   * Pure function: same input, same output; no clock (unless the input carries one),
   * no I/O, no randomness. `surface` is the validated X-Svc-Context header, if any.
   */
  compile: (input: z.output<Req>, ctx: { surface?: string }) => z.input<Res>;
  /** A realistic request body, used as the OpenAPI example and in golden tests. */
  example: z.input<Req>;
}

/** Helper that keeps the generic types while building a registry entry. */
export function defineReasoning<Req extends z.ZodType, Res extends z.ZodType>(
  e: ReasoningEndpoint<Req, Res>,
): ReasoningEndpoint<Req, Res> {
  return e;
}
