import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ListToolsRequestSchema,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { KeyPrincipal } from '../../activities/store/keys';
import { findTool, runTool, toolJsonSchemas, toolsFor } from '../../activities/tools/registry';
import type { ToolContext, ToolDef } from '../../activities/tools/types';
import { CONTRACT_VERSION } from '../openapi';

/** What the HTTP layer hands to the shared server with each message. */
export interface McpCaller {
  principal: KeyPrincipal;
  surface?: string;
}

type Pending = { originalId: string | number; owner: string; resolve: (m: JSONRPCMessage) => void };

/**
 * JSON-RPC code of a request the caller cancelled (LSP's RequestCancelled; MCP defines none). The
 * SDK sends nothing for a request whose handler was aborted, but the caller's HTTP request still
 * needs an answer, so the transport gives this one.
 */
export const REQUEST_CANCELLED = -32800;

/** Whose request this is: the key (and its tenant) that sent it. Cancellations match only within it. */
function ownerOf(authInfo: AuthInfo): string {
  const caller = authInfo.extra?.caller as McpCaller | undefined;
  return caller ? `${caller.principal.tenantId}/${caller.principal.keyId}` : '';
}

/** The key of a caller's own request id in `byCaller` (a string id "1" and a number id 1 differ). */
function callerKey(owner: string, id: string | number): string {
  return `${owner}\u0000${typeof id}:${id}`;
}

/**
 * One long-lived transport that multiplexes every HTTP request onto one SDK `Server`: each
 * incoming request gets a process-unique JSON-RPC id (callers' ids may collide), and the
 * response the server sends for that id resolves the waiting HTTP request with the caller's id
 * restored. This keeps the SDK's own dispatch (initialize negotiation, ping, -32601, capability
 * checks) without building a server and transport per request (measured ~18 ms each).
 *
 * Client messages that name a request go through the caller's own ids only: a
 * `notifications/cancelled` is translated from the caller's id to the internal ids of that
 * caller's in-flight requests (and dropped when it names none), so no caller can cancel another's
 * request; client progress notifications and client responses can only refer to requests the
 * server sent, and it sends none here, so they are dropped.
 */
class MuxTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private seq = 0;
  private readonly pending = new Map<string, Pending>();
  /** (owner, caller's id) → internal ids in flight (one caller may reuse an id across concurrent POSTs). */
  private readonly byCaller = new Map<string, Set<string>>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** In-flight requests (for tests: nothing may stay here once answered). */
  get inFlight(): number {
    return this.pending.size;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Server-initiated requests and notifications have no HTTP request to ride on here: dropped.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    this.settle(String(message.id), message);
  }

  /** Answers the HTTP request waiting for `internal` (with the caller's id restored) and forgets it. */
  private settle(internal: string, message: JSONRPCMessage): void {
    const p = this.pending.get(internal);
    if (!p) return;
    this.pending.delete(internal);
    const key = callerKey(p.owner, p.originalId);
    const ids = this.byCaller.get(key);
    ids?.delete(internal);
    if (ids?.size === 0) this.byCaller.delete(key);
    p.resolve({ ...message, id: p.originalId } as JSONRPCMessage);
  }

  /** A caller's cancellation: only its own in-flight requests with that id; anything else is dropped. */
  private cancel(message: JSONRPCNotification, authInfo: AuthInfo): void {
    const params = message.params as { requestId?: unknown; reason?: unknown } | undefined;
    const id = params?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const ids = this.byCaller.get(callerKey(ownerOf(authInfo), id));
    if (!ids) return;
    for (const internal of [...ids]) {
      // The SDK aborts the handler's signal and then sends nothing for it: answer the HTTP request here.
      this.onmessage?.({ ...message, params: { ...params, requestId: internal } }, { authInfo });
      this.settle(internal, {
        jsonrpc: '2.0',
        id: internal,
        error: { code: REQUEST_CANCELLED, message: 'Request cancelled' },
      });
    }
  }

  /** Feeds one message to the server; resolves with its response (requests) or undefined (notifications). */
  dispatch(message: JSONRPCMessage, authInfo: AuthInfo): Promise<JSONRPCMessage | undefined> {
    if (!isJSONRPCRequest(message)) {
      if (isJSONRPCNotification(message)) {
        if (message.method === 'notifications/cancelled') this.cancel(message, authInfo);
        // Progress from a client is about a request the server sent; it sends none here.
        else if (message.method !== 'notifications/progress') this.onmessage?.(message, { authInfo });
      }
      // Responses from a client answer server-initiated requests, which are never sent here: dropped.
      return Promise.resolve(undefined);
    }
    const internal = `m${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}`;
    const owner = ownerOf(authInfo);
    return new Promise((resolve) => {
      this.pending.set(internal, { originalId: message.id, owner, resolve });
      const key = callerKey(owner, message.id);
      const ids = this.byCaller.get(key);
      if (ids) ids.add(internal);
      else this.byCaller.set(key, new Set([internal]));
      this.onmessage?.({ ...message, id: internal }, { authInfo });
    });
  }
}

/** The SDK answers a thrown error with its `code` and `message`; McpError would prefix "MCP error -32602:" twice on the client. */
function rpcFailure(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  // The HTTP layer always attaches the caller; without one nothing is listed or run.
  if (!caller) throw rpcFailure(ErrorCode.InvalidRequest, 'Unauthenticated request.');
  return caller;
}

function describe(tool: ToolDef): Tool {
  const s = toolJsonSchemas(tool);
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: s.input as Tool['inputSchema'],
    outputSchema: s.output as Tool['outputSchema'],
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.destructive,
      idempotentHint: tool.readOnly,
      openWorldHint: tool.external,
    },
  };
}

export interface McpDispatcher {
  dispatch(message: JSONRPCMessage, caller: McpCaller): Promise<JSONRPCMessage | undefined>;
  /** Requests dispatched and not answered yet. */
  inFlight(): number;
}

/** Builds the process's MCP server once (per app); tools come from the tool registry, filtered by the caller's scopes. */
export async function createMcpDispatcher(toolCtx: Omit<ToolContext, 'principal' | 'surface'>): Promise<McpDispatcher> {
  const server = new Server(
    { name: 'svc-runtime', title: 'svc runtime', version: CONTRACT_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: 'Runtime tools of svc runtime. tools/list shows only the tools your key may call.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => ({
    tools: toolsFor(callerOf(extra.authInfo).principal.scopes).map(describe),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const caller = callerOf(extra.authInfo);
    const tool = findTool(req.params.name, caller.principal.scopes);
    // A tool the key may not call is reported exactly like an unknown one: nothing leaks.
    if (!tool) throw rpcFailure(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    const outcome = await runTool(tool, req.params.arguments ?? {}, {
      ...toolCtx,
      principal: caller.principal,
      surface: caller.surface,
    });
    if (!outcome.ok) return { content: [{ type: 'text', text: outcome.error }], isError: true };
    return { content: [{ type: 'text', text: JSON.stringify(outcome.result) }], structuredContent: outcome.result };
  });
  const transport = new MuxTransport();
  server.onerror = (err) => toolCtx.deps.log.warn({ err: err.message }, 'mcp server error');
  await server.connect(transport);
  return {
    dispatch: (message, caller) =>
      transport.dispatch(message, {
        token: '',
        clientId: caller.principal.keyId,
        scopes: caller.principal.scopes,
        extra: { caller },
      }),
    inFlight: () => transport.inFlight,
  };
}
