import { z } from 'zod';
import { ErrorResponse } from '../schema/errors';
import { IdempotencyHeaders } from '../schema/headers';
import type { RouteSpec } from './route';

export const CONTRACT_VERSION = '2026-04-25';

type Json = Record<string, unknown>;

/**
 * JSON Schema of a zod schema. Schemas named with `.meta({ id })` become shared components:
 * their `$defs` are hoisted into `components` and references rewritten to point there.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', components: Record<string, Json> = {}): Json {
  const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  const out = JSON.parse(JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  delete out.$schema;
  const defs = (out.$defs ?? {}) as Record<string, Json>;
  delete out.$defs;
  for (const [name, def] of Object.entries(defs)) {
    // Input and output forms of one schema can differ (defaults): keep both when they do.
    const key = components[name] && JSON.stringify(components[name]) !== JSON.stringify(def) ? `${name}_${io}` : name;
    components[key] = def;
  }
  return out;
}

/** `/v1/tasks/:id` → `/v1/tasks/{id}` */
function openapiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function accessText(route: RouteSpec): { security: Json[]; scope?: string; note: string } {
  const a = route.access;
  if (a === 'public') return { security: [], note: 'Public: no key.' };
  if (a === 'token')
    return { security: [{ registrationToken: [] }], note: 'Needs the registration token (X-Registration-Token).' };
  if (a === 'bootstrap')
    return { security: [{ bearerKey: [] }], note: 'Needs a bootstrap key (agb.<prefix>.<secret>).' };
  if (a === 'key') return { security: [{ bearerKey: [] }], note: 'Needs any runtime key.' };
  return { security: [{ bearerKey: [a.scope] }], scope: a.scope, note: `Needs scope ${a.scope}.` };
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed JSON or invalid fields (details name each path).',
  401: 'Missing, invalid or revoked credential.',
  403: 'The key lacks the required scope (scope names it).',
  404: "Unknown id (or another tenant's).",
  409: 'Conflict with the current state.',
  413: 'Body over the size limit.',
  415: 'Unsupported media type.',
};

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildOpenApi(routes: RouteSpec[], opts: { serverUrl?: string } = {}): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const components: Record<string, Json> = {};
  const js = (schema: z.ZodType, io: 'input' | 'output') => jsonSchema(schema, io, components);
  const errorRef = { $ref: '#/components/schemas/ErrorResponse' };
  for (const route of routes) {
    const access = accessText(route);
    const status = String(route.status ?? 200);
    const params: Json[] = [];
    for (const name of route.path.match(/:([A-Za-z0-9_]+)/g) ?? []) {
      params.push({ name: name.slice(1), in: 'path', required: true, schema: { type: 'string' } });
    }
    if (route.query) {
      const qs = js(route.query, 'input');
      const props = (qs.properties ?? {}) as Record<string, Json>;
      const required = new Set((qs.required as string[]) ?? []);
      for (const [name, schema] of Object.entries(props)) {
        params.push({ name, in: 'query', required: required.has(name), schema });
      }
    }
    // Declared request headers (plus Idempotency-Key on idempotent routes), from the same zod schemas.
    for (const schema of [route.headers, route.idempotent ? IdempotencyHeaders : undefined]) {
      if (!schema) continue;
      const hs = js(schema, 'input');
      for (const [name, s] of Object.entries((hs.properties ?? {}) as Record<string, Json>)) {
        if (!params.some((p) => p.in === 'header' && p.name === name))
          params.push({ name, in: 'header', required: false, schema: s });
      }
    }
    const responses: Record<string, Json> = {
      [status]: {
        description: 'Success.',
        content: route.produces
          ? Object.fromEntries(
              route.produces.map((t) => [
                t,
                route.response && t.includes('json') ? { schema: js(route.response, 'output') } : {},
              ]),
            )
          : { 'application/json': route.response ? { schema: js(route.response, 'output') } : {} },
      },
    };
    const errorStatuses = new Set<number>([
      ...(route.body ? [400, 413, 415] : []),
      ...(route.query || route.headers ? [400] : []),
      ...(route.idempotent ? [409] : []),
    ]);
    if (route.access !== 'public') [401, 403].forEach((s) => errorStatuses.add(s));
    if (params.some((p) => p.in === 'path')) errorStatuses.add(404);
    for (const s of Object.keys(route.responses ?? {})) errorStatuses.add(Number(s));
    for (const s of [...errorStatuses].sort()) {
      responses[String(s)] = {
        description: route.responses?.[s] ?? ERROR_TEXT[s] ?? 'Error.',
        content: { 'application/json': { schema: errorRef } },
      };
    }
    const op: Json = {
      operationId: `${route.method}${openapiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      description: access.note,
      tags: route.tags,
      security: access.security,
      'x-access': typeof route.access === 'object' ? 'scope' : route.access,
      ...(access.scope ? { 'x-scope': access.scope } : {}),
      ...(params.length ? { parameters: params } : {}),
      responses,
    };
    if (route.body || route.consumes) {
      const media = route.consumes ?? 'application/json';
      op.requestBody = {
        required: true,
        content: {
          [media]: {
            ...(route.body ? { schema: js(route.body, 'input') } : {}),
            ...(route.example !== undefined ? { example: route.example } : {}),
          },
        },
      };
    }
    const p = openapiPath(route.path);
    paths[p] ??= {};
    paths[p][route.method] = op;
  }
  jsonSchema(ErrorResponse, 'output', components);
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc runtime',
      version: CONTRACT_VERSION,
      description:
        'Multi-tenant runtime intelligence service. Bearer keys svc.<prefix>.<secret>; scopes per operation (x-scope).',
    },
    servers: [{ url: opts.serverUrl ?? '/' }],
    paths,
    components: {
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'Runtime key svc.<prefix>.<secret> (or legacy.*).' },
        registrationToken: { type: 'apiKey', in: 'header', name: 'X-Registration-Token' },
      },
      schemas: components,
    },
  };
}
