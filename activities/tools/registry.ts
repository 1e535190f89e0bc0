import { z } from 'zod';
import { COMMONS_TOOLS } from '../commons';
import { reasoningEndpoints } from '../../reasoning/registry';
import { AppError, invalid, zodDetails, type ErrorDetail } from '../../schema/errors';
import { inlineJsonSchema } from '../../schema/json-schema';
import { unstorablePaths } from '../../schema/storable';
import { EFFECT_TOOLS } from './effect-tools';
import { RUNTIME_TOOLS } from './runtime-tools';
import { SERVICE_TOOLS } from './service-tools';
import { defineToolDef, type ToolContext, type ToolDef } from './types';

/** `/contextual-action/plan` → `contextual_action_plan`. */
export function reasoningToolName(path: string): string {
  return path.replace(/^\//, '').replace(/[/-]/g, '_');
}

function reasoningTools(): ToolDef[] {
  return reasoningEndpoints().map((e) =>
    defineToolDef({
      name: reasoningToolName(e.path),
      title: e.summary.split(/[.:]/)[0].slice(0, 80),
      description: `${e.summary} (same as POST /v1${e.path}; pure and deterministic, nothing stored).`,
      input: e.request,
      output: e.response,
      readOnly: true,
      destructive: false,
      external: false,
      scope: 'runtime:chat',
      group: 'reasoning',
      run: (args, ctx) => e.compile(args, { surface: ctx.surface }),
    }),
  );
}

/** Commons results are objects already; anything else is wrapped so MCP structured content stays an object. */
const CommonsOut = z.record(z.string(), z.unknown());

function commonsTools(): ToolDef[] {
  return COMMONS_TOOLS.map((t) =>
    defineToolDef({
      name: t.name,
      title: t.name.replace(/_/g, ' '),
      description: t.description,
      input: t.input,
      output: CommonsOut,
      readOnly: true,
      destructive: false,
      external: false,
      scope: 'runtime:chat',
      group: 'commons',
      run: (args) => {
        let r: unknown;
        try {
          r = t.run(args);
        } catch (err) {
          // A commons tool throws only over its input (a bad expression or pattern, a bound hit): the
          // caller reads why, as the chat tool loop's model does (runCommonsTool).
          throw new AppError('invalid_request', (err as Error).message.slice(0, 500));
        }
        return r !== null && typeof r === 'object' && !Array.isArray(r)
          ? (r as Record<string, unknown>)
          : { result: r };
      },
    }),
  );
}

let cached: ToolDef[] | undefined;

/** Every tool of the service (built once: pure data). Later rooms append their families here. */
export function toolRegistry(): ToolDef[] {
  cached ??= [...RUNTIME_TOOLS, ...SERVICE_TOOLS, ...EFFECT_TOOLS, ...reasoningTools(), ...commonsTools()];
  return cached;
}

export function mayUse(tool: ToolDef, scopes: readonly string[]): boolean {
  return tool.scope === 'key' || scopes.includes(tool.scope);
}

/** The tools a key with these scopes may call, in registry order. */
export function toolsFor(scopes: readonly string[]): ToolDef[] {
  return toolRegistry().filter((t) => mayUse(t, scopes));
}

/** A tool by name, only when these scopes allow it (an unknown and a forbidden tool look the same). */
export function findTool(name: string, scopes: readonly string[]): ToolDef | undefined {
  const t = toolRegistry().find((x) => x.name === name);
  return t && mayUse(t, scopes) ? t : undefined;
}

type JsonSchema = Record<string, unknown>;
/** MCP wants `type: "object"` at the root: a root union of objects gets it added. */
function objectRoot(schema: JsonSchema): JsonSchema {
  return schema.type === undefined ? { ...schema, type: 'object' } : schema;
}

const schemaCache = new Map<string, { input: JsonSchema; output: JsonSchema }>();

/** JSON Schemas (draft 2020-12) of a tool's arguments and result; computed once per tool. */
export function toolJsonSchemas(tool: ToolDef): { input: JsonSchema; output: JsonSchema } {
  let s = schemaCache.get(tool.name);
  if (!s) {
    s = {
      input: objectRoot(inlineJsonSchema(tool.input, 'input')),
      output: objectRoot(inlineJsonSchema(tool.output, 'output')),
    };
    schemaCache.set(tool.name, s);
  }
  return s;
}

export type ToolOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

/**
 * Validates the arguments and runs the tool. Bad arguments and tool failures come back as
 * `{ ok: false }` with a message naming the field (MCP reports them as tool errors, not protocol errors).
 */
export async function runTool(tool: ToolDef, args: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  /** The same sentence as a request's 400 (`invalid`), with the fields named from the arguments' root. */
  const invalidArgs = (details: ErrorDetail[]): ToolOutcome => ({
    ok: false,
    error: invalid(
      details.map((d) => ({ ...d, path: d.path.replace(/^arguments\.?/, '') || 'arguments' })),
      'arguments',
    ).message,
  });
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return invalidArgs(zodDetails(parsed.error.issues, 'arguments'));
  // What the HTTP edge refuses in every request body (NUL, lone surrogates), refused here too: MCP,
  // agents and plans hand tools arguments that never passed that edge.
  const unstorable = unstorablePaths(parsed.data, 'arguments');
  if (unstorable.length) return invalidArgs(unstorable);
  try {
    const raw = await tool.run(parsed.data, ctx);
    const out = tool.output.safeParse(raw);
    if (!out.success) {
      ctx.deps.log.error(
        { tool: tool.name, issues: out.error.issues.slice(0, 3) },
        'tool result does not match its output schema',
      );
      return { ok: false, error: 'The tool produced an invalid result.' };
    }
    return { ok: true, result: out.data as Record<string, unknown> };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    // AppErrors carry a sentence meant for the caller; anything else stays in the log.
    if (e.code && typeof e.message === 'string' && (err as Error).name === 'AppError')
      return { ok: false, error: e.message };
    ctx.deps.log.error({ err, tool: tool.name }, 'tool failed');
    return { ok: false, error: 'The tool failed.' };
  }
}

/**
 * In-process tools that read and change nothing outside (commons, reasoning compilers): a plan runs
 * such a step as a local activity (no task-queue round trip, no extra workflow task per level).
 */
export function runsLocally(t: ToolDef): boolean {
  return t.readOnly && !t.external && (t.group === 'commons' || t.group === 'reasoning');
}
