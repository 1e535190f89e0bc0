import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';

// OpenAI's published OpenAPI document (../shared/contracts, see its README): OpenAPI 3.0, so
// `nullable: true` becomes a null alternative (and null joins a nullable enum) before Ajv reads it.
const CONTRACT = path.resolve(__dirname, '../../../shared/contracts/openai-openapi.json');

type Json = Record<string, unknown>;

function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json))
    out[k] = k === 'properties' ? mapValues(v as Json) : toJsonSchema(v);
  if (out.nullable !== true) return out;
  delete out.nullable;
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  if (typeof out.type === 'string') return { ...out, type: [out.type, 'null'] };
  return { anyOf: [out, { type: 'null' }] };
}

function mapValues(props: Json): Json {
  return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toJsonSchema(v)]));
}

let ajv: Ajv | undefined;

/** A validator for one of the document's component schemas, e.g. `CreateChatCompletionResponse`. */
export function openaiSchema(name: string): ValidateFunction {
  if (!ajv) {
    const doc = JSON.parse(readFileSync(CONTRACT, 'utf8')) as { components: { schemas: Json } };
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'openai', components: { schemas: mapValues(doc.components.schemas) } });
  }
  const validate = ajv.getSchema(`openai#/components/schemas/${name}`);
  if (!validate) throw new Error(`${name} is not a component schema of the OpenAI contract`);
  return validate;
}

/** The validation errors of `value` against `name` (empty when it conforms), readable in a failed expectation. */
export function contractErrors(name: string, value: unknown): string[] {
  const validate = openaiSchema(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/**
 * The validation errors of a Responses stream event against the contract's schema for its `type` (the union
 * `ResponseStreamEvent` reports every alternative's errors at once).
 */
export function streamEventErrors(event: { type?: unknown }): string[] {
  const doc = JSON.parse(readFileSync(CONTRACT, 'utf8')) as { components: { schemas: Record<string, Json> } };
  const schemas = doc.components.schemas;
  const union = schemas.ResponseStreamEvent.anyOf as Array<{ $ref: string }>;
  const name = union
    .map((r) => r.$ref.split('/').pop()!)
    .find((n) => {
      const type = (schemas[n].properties as Record<string, { enum?: unknown[] }> | undefined)?.type;
      return type?.enum?.includes(event.type);
    });
  if (!name) return [`no event type ${String(event.type)} in the contract`];
  return contractErrors(name, event);
}

/** POST /v1/responses with `stream: true` added to the body, as a raw fetch (its SSE read by `readResponseEvents`). */
export const postResponseStream = (baseUrl: string, key: string, body: Record<string, unknown>) =>
  fetch(`${baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });

/** One event of a Responses event stream: its name, its data, and its SSE id when it has one. */
export type ResponseEvent = { event: string; data: any; id?: string };

/** Reads a whole Responses event stream (SSE) into its events, in order. */
export async function readResponseEvents(res: Response): Promise<ResponseEvent[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((b) => /^data: /m.test(b))
    .map((block) => ({
      id: /^id: (.*)$/m.exec(block)?.[1],
      event: /^event: (.*)$/m.exec(block)?.[1] ?? '',
      data: JSON.parse(/^data: (.*)$/m.exec(block)![1]),
    }));
}
