import type { z } from 'zod';

/** One commons tool: bounded, side-effect free (no network, files, shell or persistence). */
export interface CommonsTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  run(args: z.output<S>): unknown;
}

export function defineTool<S extends z.ZodType>(tool: CommonsTool<S>): CommonsTool {
  return tool as unknown as CommonsTool;
}
