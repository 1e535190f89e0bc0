import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHarness, type Harness } from '../helpers/harness';
import { rawRequest } from './mcp-helpers';

let h: Harness;
let chatKey: { apiKey: string; tenantId: string; keyId: string };
let modelsKey: { apiKey: string; tenantId: string; keyId: string };
const SIX = [
  'get_key_info',
  'check_health',
  'get_capabilities',
  'list_surfaces',
  'list_working_styles',
  'get_request_template',
];
// Tools any runtime key may call (their routes need no scope): the six plus knowledge, memory and tasks.
const ANY_KEY = [...SIX, 'knowledge_search', 'memory_write', 'task_create', 'task_execute'];

beforeAll(async () => {
  h = await startHarness();
  chatKey = await h.key(['runtime:chat', 'runtime:models']);
  modelsKey = await h.key(['runtime:models']);
});
afterAll(async () => h?.close());

async function sdkClient(key: string): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.url}/v1/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

const rpc = (body: unknown, headers: Record<string, string> = {}, key = chatKey.apiKey) =>
  rawRequest(`${h.url}/v1/mcp`, {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${key}`,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

test('the SDK client initializes on 2025-11-25, lists tools with both schemas and calls check_health', async () => {
  const client = await sdkClient(chatKey.apiKey);
  expect(client.getServerVersion()?.name).toBe('svc-runtime');
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining([...SIX, 'quest_scaffold', 'temporal_coordinate', 'calculator']));
  // The six runtime tools, 23 compilers, 8 commons tools and the 8 web/knowledge/vector store/task tools of
  // runtime:chat or any key.
  expect(names.length).toBe(6 + 23 + 8 + 8);
  const writes = ['memory_write', 'task_create', 'task_execute'];
  for (const t of tools.filter((x) => !writes.includes(x.name))) {
    expect({
      name: t.name,
      in: t.inputSchema.type,
      out: t.outputSchema?.type,
      ro: t.annotations?.readOnlyHint,
    }).toEqual({ name: t.name, in: 'object', out: 'object', ro: true });
  }
  const health = await client.callTool({ name: 'check_health', arguments: {} });
  expect(health.isError).toBeFalsy();
  expect(health.structuredContent).toMatchObject({
    status: 'ok',
    system: 'svc-runtime',
    checks: { database: { status: 'ok' } },
  });
  const who = await client.callTool({ name: 'get_key_info', arguments: {} });
  expect(who.structuredContent).toMatchObject({ tenant_id: chatKey.tenantId, key_id: chatKey.keyId });
  await client.close();
});

test('initialize negotiates 2025-11-25 and no session id is issued', async () => {
  const r = await rpc({
    jsonrpc: '2.0',
    id: 7,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({
    jsonrpc: '2.0',
    id: 7,
    result: { protocolVersion: '2025-11-25', capabilities: { tools: {} } },
  });
  expect(r.headers['mcp-session-id']).toBeUndefined();
});

test('a reasoning tool gives the same result as its HTTP route; bad arguments are a tool error naming the field', async () => {
  const client = await sdkClient(chatKey.apiKey);
  const body = { goal: 'Ship the quarterly report', notes: 'Draft first, review Friday' };
  const viaHttp = await h.req('POST', '/v1/quest/scaffold', { key: chatKey.apiKey, body });
  expect(viaHttp.status).toBe(200);
  const viaMcp = await client.callTool({ name: 'quest_scaffold', arguments: body });
  expect(viaMcp.structuredContent).toEqual(viaHttp.body);
  const bad = await client.callTool({ name: 'quest_scaffold', arguments: { goal: 42 } });
  expect(bad.isError).toBe(true);
  expect(JSON.stringify(bad.content)).toContain('goal');
  await client.close();
});

test('arguments PostgreSQL cannot store are a tool error naming the field, and nothing is stored', async () => {
  // MCP reads its own body, so the HTTP edge's check of every request body does not see tool arguments.
  const key = await h.key(['runtime:chat']);
  const client = await sdkClient(key.apiKey);
  const nul = await client.callTool({ name: 'memory_write', arguments: { text: 'before\u0000after' } });
  const lone = await client.callTool({ name: 'task_create', arguments: { title: 'half \ud800 a pair' } });
  for (const [r, field, what] of [
    [nul, 'text', 'NUL'],
    [lone, 'title', 'surrogate'],
  ] as const) {
    expect(r.isError).toBe(true);
    const text = (r.content as Array<{ text: string }>)[0].text;
    expect(text).toMatch(new RegExp(`^Invalid arguments: ${field}: .*${what}`));
  }
  expect((await h.req('GET', '/v1/documents', { key: key.apiKey })).body.data).toEqual([]);
  expect((await h.req('GET', '/v1/tasks', { key: key.apiKey })).body.data).toEqual([]);
  await client.close();
});

test('a commons tool that cannot evaluate its input says why', async () => {
  const client = await sdkClient(chatKey.apiKey);
  const r = await client.callTool({ name: 'calculator', arguments: { expression: 'hello world' } });
  expect(r.isError).toBe(true);
  expect(r.content).toEqual([{ type: 'text', text: 'Undefined symbol hello' }]);
  const ok = await client.callTool({ name: 'calculator', arguments: { expression: '2 * 21' } });
  expect(ok.structuredContent).toEqual({ expression: '2 * 21', result: '42' });
  await client.close();
});

test('tools/list shows only what the key may call; a forbidden tool looks exactly like an unknown one', async () => {
  const client = await sdkClient(modelsKey.apiKey);
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...ANY_KEY].sort());
  const forbidden = await rpc(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'quest_scaffold', arguments: { goal: 'x' } } },
    {},
    modelsKey.apiKey,
  );
  const unknown = await rpc(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    {},
    modelsKey.apiKey,
  );
  expect(forbidden.json.error.code).toBe(-32602);
  expect(forbidden.json.error.message).toBe('Unknown tool: quest_scaffold');
  expect(unknown.json.error).toEqual({ code: -32602, message: 'Unknown tool: no_such_tool' });
  await expect(client.callTool({ name: 'calculator', arguments: { expression: '1+1' } })).rejects.toThrow(
    /Unknown tool/,
  );
  const listing = await h.req('GET', '/v1/tools', { key: modelsKey.apiKey });
  expect(listing.body.data.map((t: { name: string }) => t.name).sort()).toEqual([...ANY_KEY].sort());
  const full = await h.req('GET', '/v1/tools', { key: chatKey.apiKey });
  const calc = full.body.data.find((t: { name: string }) => t.name === 'calculator');
  expect(calc).toMatchObject({
    scope: 'runtime:chat',
    read_only: true,
    destructive: false,
    external: false,
    input_schema: { type: 'object' },
  });
  await client.close();
});

test('protocol errors: bad JSON -32700/400, unknown method -32601, not JSON-RPC -32600, notification 202', async () => {
  const bad = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
  expect(bad.status).toBe(400);
  expect(bad.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  const unknown = await rpc({ jsonrpc: '2.0', id: 'a', method: 'resources/list' });
  expect(unknown.status).toBe(200);
  expect(unknown.json).toMatchObject({ id: 'a', error: { code: -32601 } });
  const notRpc = await rpc({ hello: 'world' });
  expect(notRpc.status).toBe(400);
  expect(notRpc.json.error.code).toBe(-32600);
  const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
  expect(note.status).toBe(202);
  expect(note.text).toBe('');
  const ping = await rpc({ jsonrpc: '2.0', id: 3, method: 'ping' });
  expect(ping.json).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  const version = await rpc({ jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' });
  expect(version.status).toBe(400);
});

test('DNS-rebinding protection: a foreign Host or Origin is refused with 403', async () => {
  const foreignHost = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' }, { host: 'evil.example.com' });
  expect(foreignHost.status).toBe(403);
  const foreignOrigin = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'http://evil.example.com' });
  expect(foreignOrigin.status).toBe(403);
  const local = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'http://localhost:3000' });
  expect(local.status).toBe(200);
});

test('SSE when the client prefers text/event-stream; GET is 405; no key is 401', async () => {
  const sse = await rpc(
    { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_key_info', arguments: {} } },
    { accept: 'text/event-stream, application/json' },
  );
  expect(sse.status).toBe(200);
  expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
  const data = /^data: (.*)$/m.exec(sse.text)?.[1];
  expect(JSON.parse(data!)).toMatchObject({ id: 9, result: { structuredContent: { tenant_id: chatKey.tenantId } } });
  const get = await rawRequest(`${h.url}/v1/mcp`, {
    method: 'GET',
    headers: { authorization: `Bearer ${chatKey.apiKey}`, accept: 'text/event-stream' },
  });
  expect(get.status).toBe(405);
  const anon = await rawRequest(`${h.url}/v1/mcp`, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  expect(anon.status).toBe(401);
});

test('concurrent callers with the same request id each get their own answer', async () => {
  const keys = await Promise.all([h.key(['runtime:chat']), h.key(['runtime:chat']), h.key(['runtime:chat'])]);
  const answers = await Promise.all(
    keys.flatMap((k) =>
      [1, 2].map(() =>
        rpc(
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_key_info', arguments: {} } },
          {},
          k.apiKey,
        ).then((r) => [k.tenantId, r.json] as const),
      ),
    ),
  );
  for (const [tenant, json] of answers)
    expect(json).toMatchObject({ id: 1, result: { structuredContent: { tenant_id: tenant } } });
});
