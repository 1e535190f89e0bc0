import { z } from 'zod';
import { toolJsonSchemas, toolsFor } from '../../activities/tools/registry';
import { principalOf, type AppContext } from '../context';
import { handleMcpPost } from '../mcp/http';
import { defineRoute, type RouteSpec } from '../route';

const JsonRpcEnvelope = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'JsonRpcRequest' });

const ToolListing = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        name: z.string(),
        title: z.string(),
        description: z.string(),
        group: z.string(),
        scope: z.string().describe('`key` = any runtime key; otherwise the scope needed.'),
        read_only: z.boolean(),
        destructive: z.boolean(),
        external: z.boolean(),
        input_schema: z.record(z.string(), z.unknown()),
        output_schema: z.record(z.string(), z.unknown()),
      }),
    ),
  })
  .meta({ id: 'ToolListing' });

/** The tool registry over HTTP (GET /v1/tools) and MCP (POST /v1/mcp). */
export function mcpRoutes(all: () => RouteSpec[]): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/tools',
      access: 'key',
      summary:
        'Tools the calling key may use, with JSON Schemas of arguments and result (the same list MCP tools/list gives).',
      tags: ['tools'],
      response: ToolListing,
      handler: (ctx: AppContext) => ({
        object: 'list' as const,
        data: toolsFor(principalOf(ctx).scopes).map((t) => {
          const s = toolJsonSchemas(t);
          return {
            name: t.name,
            title: t.title,
            description: t.description,
            group: t.group,
            scope: t.scope,
            read_only: t.readOnly,
            destructive: t.destructive,
            external: t.external,
            input_schema: s.input,
            output_schema: s.output,
          };
        }),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/mcp',
      access: 'key',
      summary:
        'MCP endpoint (Streamable HTTP, stateless, protocol 2025-11-25): initialize, ping, tools/list, tools/call. JSON, or SSE when Accept prefers text/event-stream.',
      tags: ['tools'],
      body: JsonRpcEnvelope,
      consumes: 'application/json',
      produces: ['application/json', 'text/event-stream'],
      responses: {
        202: 'Only notifications were sent.',
        400: 'JSON-RPC -32700 (bad JSON) or -32600 (not a JSON-RPC message).',
        403: 'Host or Origin not allowed (DNS-rebinding protection), or a bootstrap key.',
      },
      example: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'check_health', arguments: {} } },
      handler: (ctx: AppContext) => handleMcpPost(ctx, all),
    }),
  ];
}
