import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ListToolsRequestSchema,
  type JSONRPCMessage,
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

type Pending = { originalId: string | number; resolve: (m: JSONRPCMessage) => void };

/**
 * One long-lived transport that multiplexes every HTTP request onto one SDK `Server`: each
 * incoming request gets a process-unique JSON-RPC id (callers' ids may collide), and the
 * response the server sends for that id resolves the waiting HTTP request with the caller's id
 * restored. This keeps the SDK's own dispatch (initialize negotiation, ping, -32601, capability
 * checks) without building a server and transport per request (measured ~18 ms each).
 */
class MuxTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private seq = 0;
  private readonly pending = new Map<string, Pending>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Server-initiated requests and notifications have no HTTP request to ride on here: dropped.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const key = String(message.id);
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    p.resolve({ ...message, id: p.originalId } as JSONRPCMessage);
  }

  /** Feeds one message to the server; resolves with its response (requests) or undefined (notifications). */
  dispatch(message: JSONRPCMessage, authInfo: AuthInfo): Promise<JSONRPCMessage | undefined> {
    if (!isJSONRPCRequest(message)) {
      this.onmessage?.(message, { authInfo });
      return Promise.resolve(undefined);
    }
    const internal = `m${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}`;
    return new Promise((resolve) => {
      this.pending.set(internal, { originalId: message.id, resolve });
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
  };
}
