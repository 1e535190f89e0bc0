import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * A real remote MCP server (the SDK's server over Streamable HTTP, stateless, on 127.0.0.1) for tests of the
 * Responses API's `mcp` tool. Its tools: `add` (read-only), `fail` (answers isError), `whoami` (answers whether it
 * got Authorization and X-Team headers), `slow` (answers after `ms`), and `note.write` (a name with a dot).
 * It records every JSON-RPC method it was sent, with the request's headers.
 */
export interface McpPeer {
  url: string;
  calls: Array<{ method: string; params: any; headers: http.IncomingHttpHeaders }>;
  /** tools/call requests only. */
  readonly toolCalls: Array<{ name: string; arguments: any }>;
  reset(): void;
  close(): Promise<void>;
}

const TOOLS = [
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    annotations: { readOnlyHint: true },
  },
  { name: 'fail', description: 'Always fails.', inputSchema: { type: 'object', properties: {} } },
  { name: 'whoami', description: 'Says which credentials it got.', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'slow',
    description: 'Answers after ms milliseconds.',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
  },
  {
    // What PostgreSQL cannot store, in a description and a schema: made storable, not a failed response.
    name: 'odd',
    description: 'nul\u0000 and a lone \ud800 surrogate',
    inputSchema: { type: 'object', properties: { 'k\u0000': { type: 'string', description: '\udc00' } } },
  },
  {
    name: 'note.write',
    description: 'Writes a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  },
];

export async function startMcpPeer(): Promise<McpPeer> {
  const calls: McpPeer['calls'] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    for (const m of Array.isArray(body) ? body : body ? [body] : [])
      if (m?.method) calls.push({ method: m.method, params: m.params, headers: req.headers });
    const mcp = new Server({ name: 'peer', version: '1' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    mcp.setRequestHandler(CallToolRequestSchema, async (r) => {
      const args = (r.params.arguments ?? {}) as Record<string, unknown>;
      switch (r.params.name) {
        case 'add':
          return { content: [{ type: 'text', text: String(Number(args.a) + Number(args.b)) }] };
        case 'fail':
          return { content: [{ type: 'text', text: 'the disk is full' }], isError: true };
        case 'whoami':
          return {
            content: [
              {
                type: 'text',
                text: `auth=${req.headers.authorization ? 'yes' : 'no'} team=${req.headers['x-team'] ? 'yes' : 'no'}`,
              },
            ],
          };
        case 'slow':
          await new Promise((r2) => setTimeout(r2, Number(args.ms ?? 0)));
          return { content: [{ type: 'text', text: 'done' }] };
        case 'odd':
          return { content: [{ type: 'text', text: 'odd\u0000 output \ud800' }] };
        case 'note.write':
          return { content: [{ type: 'text', text: `noted: ${String(args.text)}` }] };
        default:
          throw new Error(`unknown tool ${r.params.name}`);
      }
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get toolCalls() {
      return calls.filter((c) => c.method === 'tools/call').map((c) => c.params);
    },
    reset: () => void calls.splice(0),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
