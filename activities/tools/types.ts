import type { z } from 'zod';
import type { KeyPrincipal } from '../store/keys';
import type { AppDeps } from '../../api/deps';
import type { RuntimeScope } from '../../schema/auth';
import type { ModelRouter } from '../providers/types';

/** The service dependencies a tool run may use: the API's deps, or a worker's (activities/tools/context.ts). */
export type ToolDeps = Pick<AppDeps, 'config' | 'db' | 'log' | 'temporal'> & { models?: ModelRouter };

/** What a tool run may use: the caller, its surface, the service's dependencies and its route table. */
export interface ToolContext {
  principal: KeyPrincipal;
  surface?: string;
  deps: ToolDeps;
  /**
   * Set when the run belongs to a durable caller (a plan step: `plan-<id>:<step>`): tools that
   * create records or talk to outside systems derive their ids / Idempotency-Key from it, so a
   * retried step never creates a second record.
   */
  idempotencyKey?: string;
  /** The route table (method, path, access) for capability listings. */
  routes: () => ReadonlyArray<{ method: string; path: string; access: unknown; tags: string[] }>;
}

/**
 * One tool of the registry: a name, JSON-Schema-able input and output contracts (zod), safety
 * flags and the scope a key needs. Every surface that offers tools (GET /v1/tools, POST /v1/mcp,
 * later tool plans) reads this one list.
 */
export interface ToolDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** Changes nothing anywhere (MCP readOnlyHint). */
  readOnly: boolean;
  /** May delete or overwrite data (MCP destructiveHint). */
  destructive: boolean;
  /** Talks to systems outside this service (MCP openWorldHint). */
  external: boolean;
  /** `key`: any runtime key; otherwise the scope the key must hold. */
  scope: RuntimeScope | 'key';
  /** Family for listings: `runtime`, `reasoning`, `commons`, later `web`, `browser`. */
  group: string;
  run: (args: z.output<I>, ctx: ToolContext) => Promise<z.input<O>> | z.input<O>;
}

export function defineToolDef<I extends z.ZodType, O extends z.ZodType>(t: ToolDef<I, O>): ToolDef {
  return t as unknown as ToolDef;
}
