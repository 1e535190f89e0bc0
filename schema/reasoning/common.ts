import { z } from 'zod';

/**
 * Shared building blocks for the structured-reasoning request schemas.
 * Bounds keep every compiler's work proportional to what a caller may send.
 */
export const MAX_TEXT = 20_000;
export const MAX_SHORT = 500;
export const MAX_ITEMS = 10_000;

export const shortText = z.string().max(MAX_SHORT);
export const longText = z.string().max(MAX_TEXT);
export const idText = z.string().min(1).max(200);
export const stringList = (max = 200) => z.array(shortText).max(max);
export const surfaceField = z.string().max(50).optional();
/** Caller-supplied output cap (maxVisibleSteps, max_packets, max_nodes, max_blocks, ...). */
export const capField = (max = 1000) => z.number().int().min(1).max(max).optional();
/** ISO-8601 date-time (with or without offset). Parsed by the compiler, never by the clock. */
export const dateTime = z.string().max(64);

/** Integration hint: how a calling product can wire a compiled artifact into its own systems. */
export const integrationHint = z.object({
  kind: z.string(),
  target: z.string(),
  detail: z.string(),
});
export type IntegrationHint = z.infer<typeof integrationHint>;
