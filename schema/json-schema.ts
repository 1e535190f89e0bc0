import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema (draft 2020-12) of a zod schema with the root inlined: zod emits a root `$ref` to
 * `$defs` when the schema has a registered id, which MCP and AsyncAPI payloads do not want.
 */
export function inlineJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const s = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  const ref = typeof s.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(s.$ref) : null;
  if (!ref) return s;
  const defs = { ...(s.$defs as Record<string, JsonSchema>) };
  const target = defs[ref[1]];
  delete defs[ref[1]];
  return { $schema: s.$schema, ...target, ...(Object.keys(defs).length ? { $defs: defs } : {}) };
}
