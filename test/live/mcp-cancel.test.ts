import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { authenticateKey, type KeyPrincipal } from '../../activities/store/keys';
import { createMcpDispatcher, type McpDispatcher } from '../../api/mcp/server';
import { allRoutes } from '../../api/routes';
import { withSlowInserts } from '../helpers/db-faults';
import { startHarness, type Harness } from '../helpers/harness';
import { rawRequest } from './mcp-helpers';

// Client notifications name requests by id; on the one shared MCP server they must reach only the caller's own.
let h: Harness;
let a: { apiKey: string; tenantId: string; keyId: string };
let b: { apiKey: string; tenantId: string; keyId: string };

beforeAll(async () => {
  h = await startHarness();
  a = await h.key(['runtime:chat']);
  b = await h.key(['runtime:chat']);
});
afterAll(async () => h?.close());

/** A promise's value, or 'timeout' when it has not settled within `ms` (a hang must fail the test, not stall it). */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** Statements inserting a document that are running now (held by the slow-insert trigger). */
const insertsRunning = () =>
  h.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND state = 'active' AND query LIKE '%INSERT INTO documents%'
      AND query NOT LIKE '%pg_stat_activity%'`);

async function untilInsertRunning(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await insertsRunning()) === 0) {
    if (Date.now() > deadline) throw new Error('the tool never reached its insert');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const write = (id: string | number, text: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'memory_write', arguments: { text } },
});
const cancelled = (requestId: string | number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'test' },
});

describe('the dispatcher (real database and Temporal)', () => {
  let d: McpDispatcher;
  let callerA: { principal: KeyPrincipal };
  let callerB: { principal: KeyPrincipal };
  beforeAll(async () => {
    const deps = {
      config: h.config,
      db: h.db,
      log: pino({ level: 'silent' }),
      temporal: { connection: h.connection, client: h.client },
    };
    d = await createMcpDispatcher({ deps, routes: allRoutes });
    callerA = { principal: (await authenticateKey(h.db, a.apiKey))! };
    callerB = { principal: (await authenticateKey(h.db, b.apiKey))! };
  });

  test("another tenant's cancel, by internal id or by the victim's own id, does not touch its request", async () => {
    await withSlowInserts(h.db, 'documents', 1, async () => {
      // A fresh dispatcher: B's request is the first one, internal id m1.
      const pb = d.dispatch(write(1, 'tenant B note'), callerB);
      await untilInsertRunning();
      // A names B's internal id, and B's own id (A has nothing in flight with it).
      await d.dispatch(cancelled('m1'), callerA);
      await d.dispatch(cancelled(1), callerA);
      const reply = await within(pb, 10_000);
      expect(reply).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        result: { structuredContent: { chunks: 1, document: { title: 'tenant B note' } } },
      });
    });
    expect(d.inFlight()).toBe(0);
  });

  test("a caller's cancel of its own request answers it at once with -32800, and nothing stays pending", async () => {
    await withSlowInserts(h.db, 'documents', 3, async () => {
      const pa = d.dispatch(write('w', 'tenant A note'), callerA);
      // B uses the same id at the same time: A's cancel is not B's.
      const pb = d.dispatch(write('w', 'tenant B note'), callerB);
      await untilInsertRunning();
      expect(d.inFlight()).toBe(2);
      await d.dispatch(cancelled('w'), callerA);
      // Answered well before the 3 s insert ends: by the cancel, not by the tool finishing.
      expect(await within(pa, 1_500)).toEqual({
        jsonrpc: '2.0',
        id: 'w',
        error: { code: -32800, message: 'Request cancelled' },
      });
      expect(d.inFlight()).toBe(1);
      expect(await within(pb, 10_000)).toMatchObject({ id: 'w', result: { structuredContent: {} } });
    });
    expect(d.inFlight()).toBe(0);
  });

  test('a cancel that names nothing in flight, and client progress, change nothing', async () => {
    expect(await d.dispatch(cancelled('nope'), callerA)).toBeUndefined();
    expect(
      await d.dispatch(
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
        callerA,
      ),
    ).toBeUndefined();
    const r = await within(d.dispatch({ jsonrpc: '2.0', id: 5, method: 'ping' }, callerA), 5_000);
    expect(r).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    expect(d.inFlight()).toBe(0);
  });
});

const post = (body: unknown, key: string) =>
  rawRequest(`${h.url}/v1/mcp`, {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify(body),
  });

describe('over HTTP', () => {
  test("a sprayed batch of cancels (m1..m50) from tenant A leaves tenant B's POST to be answered", async () => {
    await withSlowInserts(h.db, 'documents', 1, async () => {
      const pb = post(write(3, 'tenant B over http'), b.apiKey);
      await untilInsertRunning();
      const spray = await post(
        Array.from({ length: 50 }, (_, i) => cancelled(`m${i + 1}`)),
        a.apiKey,
      );
      expect(spray.status).toBe(202);
      const reply = await within(pb, 10_000);
      expect(reply).not.toBe('timeout');
      expect((reply as { status: number; json: unknown }).status).toBe(200);
      expect((reply as { json: unknown }).json).toMatchObject({ id: 3, result: { structuredContent: {} } });
    });
  });

  test('a request cancelled in its own batch is answered -32800; the rest of the batch is answered as usual', async () => {
    const r = await within(
      post(
        [
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'check_health', arguments: {} } },
          cancelled(1),
          { jsonrpc: '2.0', id: 2, method: 'ping' },
        ],
        a.apiKey,
      ),
      10_000,
    );
    expect(r).not.toBe('timeout');
    expect((r as { status: number }).status).toBe(200);
    expect((r as { json: unknown }).json).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32800, message: 'Request cancelled' } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
  });
});
