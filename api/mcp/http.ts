import {
  ErrorCode,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../context';
import { principalOf } from '../context';
import type { AppDeps } from '../deps';
import type { RouteSpec } from '../route';
import { lazyModule } from '../../activities/lazy-module';
import type { McpDispatcher } from './server';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the SDK's server (4 MB of heap) loads on the first MCP call (see lazyModule)
const mcpServer = lazyModule(() => require('./server') as typeof import('./server'));

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Hostnames a request may name (Host and Origin): loopback and the configured public URL. */
function allowedHosts(deps: AppDeps): Set<string> {
  const out = new Set(LOOPBACK);
  if (deps.config.publicUrl) out.add(new URL(deps.config.publicUrl).hostname.toLowerCase());
  return out;
}

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** A JSON-RPC error with no request id (transport-level: the message could not be read). */
function rpcError(
  ctx: AppContext,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = { jsonrpc: '2.0', id, error: { code, message } };
}

async function readBody(ctx: AppContext, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const dispatchers = new WeakMap<AppDeps, Promise<McpDispatcher>>();

/** The app's one MCP server (built on first use, then shared by every request). */
function dispatcherFor(deps: AppDeps, routes: () => RouteSpec[]): Promise<McpDispatcher> {
  let d = dispatchers.get(deps);
  if (!d) {
    d = mcpServer().createMcpDispatcher({ deps, routes });
    dispatchers.set(deps, d);
  }
  return d;
}

/**
 * POST /v1/mcp: stateless Streamable HTTP. Every POST is answered on its own (no session, so
 * any replica can answer), as JSON, or as a one-message SSE stream when the client lists
 * `text/event-stream` before `application/json` in Accept.
 */
export async function handleMcpPost(ctx: AppContext, routes: () => RouteSpec[]): Promise<void> {
  const deps = ctx.deps;
  const hosts = allowedHosts(deps);
  const host = hostnameOf(ctx.get('Host'));
  const origin = ctx.get('Origin');
  // DNS-rebinding protection: a page on another site must not reach this endpoint through the browser.
  if (!host || !hosts.has(host))
    return rpcError(ctx, 403, ErrorCode.ConnectionClosed, `Host ${ctx.get('Host') || '(none)'} is not allowed.`);
  if (origin) {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).hostname.toLowerCase();
    } catch {
      originHost = undefined;
    }
    if (!originHost || !hosts.has(originHost))
      return rpcError(ctx, 403, ErrorCode.ConnectionClosed, `Origin ${origin} is not allowed.`);
  }
  const version = ctx.get('MCP-Protocol-Version');
  if (version && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return rpcError(
      ctx,
      400,
      ErrorCode.InvalidRequest,
      `Unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
    );
  }
  if (!ctx.is('application/json'))
    return rpcError(ctx, 415, ErrorCode.InvalidRequest, 'Send the JSON-RPC message as application/json.');

  const text = await readBody(ctx, deps.config.bodyLimit);
  if (text === undefined)
    return rpcError(ctx, 413, ErrorCode.InvalidRequest, `The request body exceeds ${deps.config.bodyLimit} bytes.`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return rpcError(ctx, 400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON.');
  }
  const batch = Array.isArray(raw);
  const items = batch ? (raw as unknown[]) : [raw];
  if (items.length === 0 || items.length > 50)
    return rpcError(
      ctx,
      400,
      ErrorCode.InvalidRequest,
      'Invalid Request: send one JSON-RPC message (or a batch of 1 to 50).',
    );
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) {
      const id = (item as { id?: unknown })?.id;
      return rpcError(
        ctx,
        400,
        ErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message.',
        typeof id === 'string' || typeof id === 'number' ? id : null,
      );
    }
    messages.push(parsed.data);
  }

  const dispatcher = await dispatcherFor(deps, routes);
  const caller = { principal: principalOf(ctx), surface: ctx.state.surface };
  const replies = (await Promise.all(messages.map((m) => dispatcher.dispatch(m, caller)))).filter(
    (r): r is JSONRPCMessage => r !== undefined,
  );
  // Only notifications or responses: accepted, nothing to say.
  if (!messages.some(isJSONRPCRequest)) {
    ctx.body = null; // Koa turns a null body into 204: set the status after it.
    ctx.status = 202;
    return;
  }
  const payload = batch ? replies : replies[0];
  if (ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream') {
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/event-stream';
    ctx.body = replies.map((r) => `event: message\ndata: ${JSON.stringify(r)}\n\n`).join('');
    return;
  }
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = payload;
}
