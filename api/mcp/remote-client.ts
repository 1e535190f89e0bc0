import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { FetchFailure, guardedRequest } from '../../activities/net/guarded-http';
import type { PrivateFetchPolicy } from '../../activities/net/ssrf';
import { parseStorableJson, readableText } from '../../schema/storable';

// A client of remote MCP servers (OpenAI's `mcp` tool in the Responses API). The SDK's client speaks the
// protocol (initialize, versions, paging, result shapes); every byte goes through the one fetch guard.

/** A tool as a remote server lists it. */
export interface RemoteTool {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
}

/** OpenAI's error of an MCP call (MCPToolCallError): the protocol's, the tool's own, or the HTTP exchange's. */
export type RemoteCallError =
  | { type: 'mcp_protocol_error'; code: number; message: string }
  | { type: 'mcp_tool_execution_error'; content: unknown }
  | { type: 'http_error'; code: number; message: string };

type RemoteCallResult = { output: string; error: null } | { output: string | null; error: RemoteCallError };

/** Why a server could not be reached or listed: the guard refused it, it timed out, or it failed. */
export class RemoteMcpFailure extends Error {
  constructor(
    readonly kind: 'refused' | 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'RemoteMcpFailure';
  }
}

export interface RemoteMcpOptions {
  url: string;
  headers: Record<string, string>;
  allowPrivate: PrivateFetchPolicy;
  /** The request's signal: a client that leaves stops the exchange. */
  signal: AbortSignal;
}

/** Bytes one answer of a server may hold. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Characters of a call's output the model is given (the rest is cut, and the output says so). */
const MAX_OUTPUT_CHARS = 200_000;
/** Time one exchange (initialize, a page of tools, a call) may take. */
const EXCHANGE_MS = 60_000;
/** Pages of a tool list read (each up to the server's page size). */
const MAX_PAGES = 20;
const MAX_TOOLS = 1000;

/**
 * The SDK transport's fetch, through the guard: POSTs only (the messages). The standalone GET stream the transport
 * opens for server-initiated messages is answered 405, as a server without one answers: a response's calls need none.
 */
function guardedFetch(o: RemoteMcpOptions): FetchLike {
  return async (url, init) => {
    if ((init?.method ?? 'GET').toUpperCase() !== 'POST') return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    const signals = [o.signal, init?.signal].filter((s): s is AbortSignal => s != null);
    const r = await guardedRequest(url, {
      allowPrivate: o.allowPrivate,
      method: 'POST',
      headers,
      body: typeof init?.body === 'string' ? init.body : undefined,
      maxBytes: MAX_ANSWER_BYTES,
      overflow: 'fail',
      timeoutMs: EXCHANGE_MS,
      decompress: true,
      signal: AbortSignal.any(signals),
      userAgent: 'svc-runtime/1 (+mcp tool)',
      refuseLocalNames: true,
    });
    const h = new Headers();
    for (const [k, v] of Object.entries(r.headers))
      if (v !== undefined && !['content-encoding', 'content-length', 'transfer-encoding'].includes(k))
        h.set(k, Array.isArray(v) ? v.join(', ') : v);
    const empty = r.status === 204 || r.status === 205 || r.status === 304;
    return new Response(empty ? null : new Uint8Array(r.body), { status: r.status, headers: h });
  };
}

/** A failure of the exchange as a sentence, without the server's whole answer (storable: the server wrote it). */
const short = (s: string) => readableText(s.length > 500 ? `${s.slice(0, 500)}…` : s);

/** JSON a server wrote, made storable: every string and key without NUL or lone surrogates. */
const storable = <T>(v: T): T => parseStorableJson(JSON.stringify(v ?? null)) as T;

/** Characters of a tool's description kept (what an item sent back may hold). */
const MAX_DESCRIPTION_CHARS = 100_000;
/** Bytes of a server's whole tool list kept in a response (its item is stored and sent back each turn). */
const MAX_LIST_BYTES = 2 * 1024 * 1024;
/** A tool name an item sent back can carry (MCP's names are at most 128 characters). */
// eslint-disable-next-line no-control-regex -- control characters are what the name must not hold
const TOOL_NAME = /^[^\u0000-\u001f]{1,128}$/;

function failureOf(err: unknown, url: string): RemoteMcpFailure {
  const host = (() => {
    try {
      return new URL(url).host;
    } catch {
      return url;
    }
  })();
  const cause = err instanceof Error && err.cause instanceof FetchFailure ? err.cause : err;
  if (cause instanceof FetchFailure) {
    if (cause.kind === 'refused' || cause.kind === 'invalid') return new RemoteMcpFailure('refused', cause.message);
    if (cause.kind === 'timeout')
      return new RemoteMcpFailure('timeout', `The MCP server at ${host} did not answer in time.`);
    return new RemoteMcpFailure('failed', `The MCP server at ${host} could not be reached: ${short(cause.message)}`);
  }
  if (err instanceof StreamableHTTPError)
    return new RemoteMcpFailure('failed', `The MCP server at ${host} answered HTTP ${err.code}: ${short(err.message)}`);
  if (err instanceof McpError)
    return new RemoteMcpFailure(
      'failed',
      `The MCP server at ${host} answered error ${err.code}: ${short(err.message)}`,
    );
  const message = err instanceof Error ? err.message : String(err);
  return new RemoteMcpFailure('failed', `The MCP server at ${host} failed: ${short(message)}`);
}

/** A call's content as the text the model reads: text parts as they are, other parts named. */
function outputText(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const text = parts
    .map((p) => {
      if (p.type === 'text' && typeof p.text === 'string') return p.text;
      if (p.type === 'resource' && p.resource && typeof p.resource === 'object') {
        const r = p.resource as { text?: unknown; uri?: unknown };
        return typeof r.text === 'string' ? r.text : `[resource: ${String(r.uri)}]`;
      }
      if (p.type === 'resource_link') return `[resource: ${String(p.uri)}]`;
      return `[${String(p.type)}${typeof p.mimeType === 'string' ? `: ${p.mimeType}` : ''}]`;
    })
    .join('\n');
  const whole = text || (result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : '');
  const readable = readableText(whole);
  return readable.length > MAX_OUTPUT_CHARS
    ? `${readable.slice(0, MAX_OUTPUT_CHARS)}\n[output cut at ${MAX_OUTPUT_CHARS} characters]`
    : readable;
}

/** One connection to a remote MCP server for the length of a response. */
export class RemoteMcp {
  private constructor(
    private readonly client: Client,
    private readonly o: RemoteMcpOptions,
  ) {}

  /** Connects (initialize) through the guard. @throws RemoteMcpFailure */
  static async connect(o: RemoteMcpOptions): Promise<RemoteMcp> {
    const transport = new StreamableHTTPClientTransport(new URL(o.url), {
      fetch: guardedFetch(o),
      requestInit: { headers: o.headers },
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const client = new Client({ name: 'svc-runtime', version: '1' }, { capabilities: {} });
    // Errors of the transport's background work (the GET stream, answered 405 here) are not the call's.
    client.onerror = () => undefined;
    try {
      await client.connect(transport, { timeout: EXCHANGE_MS, signal: o.signal });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw failureOf(err, o.url);
    }
    return new RemoteMcp(client, o);
  }

  /** The server's tools, every page (at most MAX_TOOLS). @throws RemoteMcpFailure */
  async listTools(): Promise<RemoteTool[]> {
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
        const r = await this.client.listTools(cursor ? { cursor } : {}, {
          timeout: EXCHANGE_MS,
          signal: this.o.signal,
        });
        for (const t of r.tools) {
          // A name that cannot be sent back (or called by that name) leaves the tool out.
          if (!TOOL_NAME.test(t.name) || !t.name.isWellFormed()) continue;
          tools.push({
            name: t.name,
            description: t.description != null ? readableText(t.description).slice(0, MAX_DESCRIPTION_CHARS) : null,
            input_schema: storable(t.inputSchema as Record<string, unknown>),
            annotations: t.annotations != null ? storable(t.annotations as Record<string, unknown>) : null,
          });
        }
        cursor = r.nextCursor;
        if (!cursor) break;
      }
    } catch (err) {
      throw failureOf(err, this.o.url);
    }
    const kept = tools.slice(0, MAX_TOOLS);
    if (Buffer.byteLength(JSON.stringify(kept)) > MAX_LIST_BYTES)
      throw new RemoteMcpFailure(
        'failed',
        `The MCP server at ${new URL(this.o.url).host} lists more than ${MAX_LIST_BYTES} bytes of tools.`,
      );
    return kept;
  }

  /** Calls a tool: its output, or the error as OpenAI's mcp_call item carries it (never thrown). */
  async callTool(name: string, args: Record<string, unknown>): Promise<RemoteCallResult> {
    try {
      const r = await this.client.callTool({ name, arguments: args }, undefined, {
        timeout: EXCHANGE_MS,
        signal: this.o.signal,
      });
      const output = outputText(r as { content?: unknown; structuredContent?: unknown });
      // The tool's own error: its text parts (capped, as the output), what the model and the client read.
      if (r.isError)
        return { output, error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: output }] } };
      return { output, error: null };
    } catch (err) {
      if (this.o.signal.aborted) throw err;
      if (err instanceof McpError)
        return { output: null, error: { type: 'mcp_protocol_error', code: err.code, message: short(err.message) } };
      if (err instanceof StreamableHTTPError)
        return { output: null, error: { type: 'http_error', code: err.code ?? 502, message: short(err.message) } };
      const f = failureOf(err, this.o.url);
      return {
        output: null,
        error: { type: 'http_error', code: f.kind === 'timeout' ? 504 : 502, message: f.message },
      };
    }
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}
