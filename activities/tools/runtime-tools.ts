import { z } from 'zod';
import { healthReport } from '../../api/health-report';
import { SURFACE_REGISTRY } from '../../reasoning/surfaces-registry';
import { KEY_KINDS } from '../../schema/auth';
import { HealthResponse } from '../../schema/system';
import { SURFACES } from '../../schema/surfaces';
import { defineToolDef, type ToolDef } from './types';

const KeyInfoOut = z.object({
  key_id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(KEY_KINDS),
  app: z.string().nullable(),
  scopes: z.array(z.string()),
});

const Capability = z.object({
  family: z.string(),
  routes: z.number().int(),
  available: z.boolean(),
  needs: z.array(z.string()),
});

const WorkingStyle = z.object({ surface: z.enum(SURFACES), id: z.string(), title: z.string(), guidance: z.string() });

function accessScope(access: unknown): string {
  if (typeof access === 'object' && access !== null && 'scope' in access)
    return String((access as { scope: string }).scope);
  return String(access);
}

/** The spec's six public runtime MCP tools. All are read-only and stay inside the service. */
export const RUNTIME_TOOLS: ToolDef[] = [
  defineToolDef({
    name: 'get_key_info',
    title: 'Key info',
    description: 'Describe the calling key: id, tenant, kind, app and scopes (never the secret).',
    input: z.object({}),
    output: KeyInfoOut,
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'runtime',
    run: (_args, { principal: p }) => ({
      key_id: p.keyId,
      tenant_id: p.tenantId,
      kind: p.kind,
      app: p.app,
      scopes: p.scopes,
    }),
  }),
  defineToolDef({
    name: 'check_health',
    title: 'Service health',
    description:
      'Service health: database and Temporal checks with latencies, and the knowledge search mode (same as GET /v1/health).',
    input: z.object({}),
    output: HealthResponse,
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'runtime',
    run: (_args, ctx) => healthReport(ctx.deps),
  }),
  defineToolDef({
    name: 'get_capabilities',
    title: 'Capabilities',
    description: 'Capability families of this service (from the route table) and whether the calling key may use each.',
    input: z.object({}),
    output: z.object({ scopes: z.array(z.string()), capabilities: z.array(Capability) }),
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'runtime',
    run: (_args, ctx) => {
      const families = new Map<string, { routes: number; needs: Set<string> }>();
      for (const r of ctx.routes()) {
        const family = r.tags[0] ?? 'other';
        const f = families.get(family) ?? { routes: 0, needs: new Set<string>() };
        f.routes += 1;
        f.needs.add(accessScope(r.access));
        families.set(family, f);
      }
      const held = new Set(['public', 'key', ...ctx.principal.scopes]);
      const capabilities = [...families.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([family, f]) => {
          const needs = [...f.needs].sort();
          return { family, routes: f.routes, needs, available: needs.some((n) => held.has(n)) };
        });
      return { scopes: ctx.principal.scopes, capabilities };
    },
  }),
  defineToolDef({
    name: 'list_surfaces',
    title: 'Surfaces',
    description: 'The surfaces (X-Svc-Context values) with their guidance and working styles.',
    input: z.object({}),
    output: z.object({
      surfaces: z.array(
        z.object({
          id: z.enum(SURFACES),
          title: z.string(),
          guidance: z.string(),
          working_styles: z.array(z.string()),
        }),
      ),
    }),
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'runtime',
    run: () => ({
      surfaces: SURFACES.map((id) => ({
        id,
        title: SURFACE_REGISTRY[id].title,
        guidance: SURFACE_REGISTRY[id].guidance,
        working_styles: Object.keys(SURFACE_REGISTRY[id].profiles),
      })),
    }),
  }),
  defineToolDef({
    name: 'list_working_styles',
    title: 'Working styles',
    description:
      'Working styles (chat `profile` values), each honoured only on its surface; optionally for one surface.',
    input: z.object({ surface: z.enum(SURFACES).optional().describe('Only this surface.') }),
    output: z.object({ working_styles: z.array(WorkingStyle) }),
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'runtime',
    run: ({ surface }) => ({
      working_styles: SURFACES.filter((s) => !surface || s === surface).flatMap((s) =>
        Object.entries(SURFACE_REGISTRY[s].profiles).map(([id, p]) => ({
          surface: s,
          id,
          title: p.title,
          guidance: p.guidance,
        })),
      ),
    }),
  }),
  defineToolDef({
    name: 'get_request_template',
    title: 'Chat request template',
    description:
      'A ready-to-send POST /v1/chat/completions request (headers and body) for a surface and working style.',
    input: z.object({
      surface: z.enum(SURFACES).optional(),
      profile: z.string().max(50).optional().describe('Working style; kept only when it belongs to the surface.'),
      stream: z.boolean().optional(),
    }),
    output: z.object({
      method: z.literal('POST'),
      path: z.literal('/v1/chat/completions'),
      headers: z.record(z.string(), z.string()),
      body: z.object({
        model: z.string(),
        messages: z.array(z.object({ role: z.string(), content: z.string() })),
        stream: z.boolean(),
        profile: z.string().optional(),
      }),
    }),
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'runtime',
    run: ({ surface, profile, stream }) => {
      const id = profile?.trim().toLowerCase();
      const kept = surface && id && Object.hasOwn(SURFACE_REGISTRY[surface].profiles, id) ? id : undefined;
      const headers: Record<string, string> = {
        Authorization: 'Bearer <runtime key>',
        'Content-Type': 'application/json',
      };
      if (surface) headers['X-Svc-Context'] = surface;
      if (stream) headers.Accept = 'text/event-stream';
      return {
        method: 'POST' as const,
        path: '/v1/chat/completions' as const,
        headers,
        body: {
          model: 'svc-oracle',
          messages: [{ role: 'user', content: '<your message>' }],
          stream: Boolean(stream),
          ...(kept ? { profile: kept } : {}),
        },
      };
    },
  }),
];
