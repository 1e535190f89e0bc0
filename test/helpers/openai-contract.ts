import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';

const DOC = path.resolve(__dirname, '../../../shared/contracts/openai-openapi.json');

/** OpenAPI 3.0 → JSON Schema: `nullable: true` becomes a null alternative (and `null` joins a nullable enum). */
function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'nullable') out[k] = convert(v);
  if ((node as { nullable?: boolean }).nullable) {
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

let ajv: Ajv | undefined;

/** A validator for one component schema of OpenAI's published OpenAPI document (../shared/contracts). */
export function openAiSchema(name: string): ValidateFunction {
  if (!ajv) {
    const doc = JSON.parse(readFileSync(DOC, 'utf8')) as { components: unknown };
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'openai', components: convert(doc.components) });
  }
  return ajv.compile({ $ref: `openai#/components/schemas/${name}` });
}
