import fc from 'fast-check';
import type { z } from 'zod';
import type { ReasoningEndpoint } from '../../reasoning/types';

/**
 * Checks shared by the structured-reasoning endpoint tests. Endpoint-specific facts
 * (caps, references, golden values) stay in each test file; only the repeated
 * "compile twice / validate" and "reject at this field path" blocks live here.
 */

type Ctx = { surface?: string };

/**
 * Compiles an already parsed `input` twice with the same `ctx`: it must not throw, both
 * outputs must be deep-equal (determinism) and the output must pass `endpoint.response`.
 * Returns the first output for the caller's endpoint-specific checks.
 */
export function expectCompilesCleanly<Req extends z.ZodType, Res extends z.ZodType>(
  endpoint: ReasoningEndpoint<Req, Res>,
  input: z.output<Req>,
  ctx: Ctx = {},
): z.input<Res> {
  const out = endpoint.compile(input, ctx);
  expect(endpoint.compile(input, ctx)).toEqual(out);
  endpoint.response.parse(out);
  return out;
}

/**
 * Like `expectCompilesCleanly`, but from a raw request body that is parsed afresh for each
 * compile, so a compiler that mutated its input could not hide nondeterminism.
 * Returns the first parsed input and its output.
 */
export function expectCompilesCleanlyFromBody<Req extends z.ZodType, Res extends z.ZodType>(
  endpoint: ReasoningEndpoint<Req, Res>,
  body: unknown,
  ctx: Ctx = {},
): { input: z.output<Req>; out: z.input<Res> } {
  const input = endpoint.request.parse(body);
  const out = endpoint.compile(input, ctx);
  expect(endpoint.compile(endpoint.request.parse(body), ctx)).toEqual(out);
  endpoint.response.parse(out);
  return { input, out };
}

/** Expects `schema` to reject `body`; returns the dotted paths of its issues (e.g. `items.0.id`). */
export function issuePaths(schema: z.ZodType, body: unknown): string[] {
  const r = schema.safeParse(body);
  expect(r.success).toBe(false);
  return r.error!.issues.map((i) => i.path.join('.'));
}

/** Expects `schema` to reject `body` with an issue at the dotted `path`. */
export function expectRejectsAt(schema: z.ZodType, body: unknown, path: string): void {
  expect(issuePaths(schema, body)).toContain(path);
}

/**
 * The property test every compiler has: for each generated `body`, parsing and compiling never throws,
 * is deterministic and validates (`expectCompilesCleanly`); `check` adds the compiler's own facts
 * (caps honoured, references to input ids only).
 */
export function itCompilesGeneratedBodies<Req extends z.ZodType, Res extends z.ZodType>(
  endpoint: ReasoningEndpoint<Req, Res>,
  body: fc.Arbitrary<unknown>,
  check: (input: z.output<Req>, out: z.input<Res>) => void,
  numRuns = 100,
): void {
  it('never throws, is deterministic, validates, honours caps and references', () => {
    fc.assert(
      fc.property(body, (b) => {
        const input = endpoint.request.parse(b);
        check(input, expectCompilesCleanly(endpoint, input));
      }),
      { numRuns },
    );
  });
}
