/**
 * MCP benchmark: `tools/call check_health` over POST /v1/mcp (stateless Streamable HTTP, one
 * shared SDK server) vs the same work on a plain JSON route of ours (key auth + the health report
 * of GET /v1/health), same process, same app, 10 concurrent clients, targets alternating in
 * slices. Goal: MCP p50 ≤ 1.5× the plain route's p50. An auth-only pair (get_key_info vs
 * GET /v1/key) is printed too.
 * Run: npm run -s bench -- mcp   (needs PostgreSQL on 127.0.0.1:5432; starts a Temporal dev server)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app';
import { healthReport } from '../api/health-report';
import { defineRoute } from '../api/route';
import { allRoutes } from '../api/routes';
import { createDb } from '../activities/store/db';
import { createTenant, mintKey } from '../activities/store/keys';
import { freshDatabase } from '../test/helpers/harness';
import { parseConfig } from '../schema/config';
import { findOrBuildTemporalCli, freePort, startDevServer } from '../workers/temporal-dev';
import { fmt, percentile } from './helpers';

/**
 * The baseline doing the same work as the MCP call: key authentication through the same auth
 * middleware, then the same health report, answered as plain JSON. Mounted only in this bench.
 */
const keyedHealth = defineRoute({
  method: 'get',
  path: '/v1/bench/keyed-health',
  access: 'key',
  summary: 'bench only',
  tags: ['bench'],
  handler: (ctx) => healthReport(ctx.deps),
});

/** The real app (every route plus the bench baseline) on a loopback port against a fresh database. */
async function startApp(temporalAddress: string) {
  const database = await freshDatabase({
    base: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432',
    prefix: 'svc_bench',
  });
  const config = parseConfig({
    DATABASE_URL: database.url,
    SVC_LOG_LEVEL: 'silent',
    TEMPORAL_ADDRESS: temporalAddress,
  });
  const db = await createDb({ url: database.url, maxConnections: 10 });
  const connection = await Connection.connect({ address: temporalAddress });
  const app = createApp(
    { config, db, log: pino({ level: 'silent' }), temporal: { connection, client: new Client({ connection }) } },
    [...allRoutes(), keyedHealth],
  );
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    key: async (scopes: string[]) =>
      (await mintKey(db, { tenantId: await createTenant(db), kind: 'runtime', scopes })).apiKey,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await connection.close();
      await db.end();
      await database.drop();
    },
  };
}

const TOTAL = Number(process.env.BENCH_TOTAL ?? 1000);
const CONCURRENCY = 10;
const SLICE = 100;
const GOAL = 1.5;

interface Target {
  name: string;
  call(): Promise<void>;
}

async function slice(t: Target, n: number, samples: number[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        const started = performance.now();
        await t.call();
        samples.push(performance.now() - started);
      }
    }),
  );
}

async function main(): Promise<void> {
  const log = pino({ level: 'warn' });
  const cli = await findOrBuildTemporalCli({ log });
  if (cli.path === null) throw new Error(`no Temporal CLI: ${cli.attempts.join('; ')}`);
  const temporal = await startDevServer({ cli: cli.path, port: await freePort(), namespace: 'default', log });
  const app = await startApp(temporal.address);
  try {
    const key = await app.key(['runtime:chat']);
    const auth = { authorization: `Bearer ${key}` };
    const keyBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_key_info', arguments: {} },
    });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'check_health', arguments: {} },
    });
    const targets: Target[] = [
      {
        name: 'GET keyed health (plain JSON, same work)',
        call: async () => {
          const res = await fetch(`${app.url}/v1/bench/keyed-health`, { headers: auth });
          const j = (await res.json()) as { status?: string };
          if (res.status !== 200 || j.status !== 'ok') throw new Error(`health: ${res.status} ${JSON.stringify(j)}`);
        },
      },
      {
        name: 'POST /v1/mcp tools/call check_health',
        call: async () => {
          const res = await fetch(`${app.url}/v1/mcp`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body,
          });
          const j = (await res.json()) as { result?: { structuredContent?: { status?: string } } };
          if (res.status !== 200 || j.result?.structuredContent?.status !== 'ok')
            throw new Error(`mcp: ${res.status} ${JSON.stringify(j)}`);
        },
      },
      {
        name: 'GET /v1/key (plain JSON, same auth)',
        call: async () => {
          const res = await fetch(`${app.url}/v1/key`, { headers: auth });
          const j = (await res.json()) as { key_id?: string };
          if (res.status !== 200 || !j.key_id) throw new Error(`key: ${res.status}`);
        },
      },
      {
        name: 'POST /v1/mcp tools/call get_key_info',
        call: async () => {
          const res = await fetch(`${app.url}/v1/mcp`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: keyBody,
          });
          const j = (await res.json()) as { result?: { structuredContent?: { key_id?: string } } };
          if (res.status !== 200 || !j.result?.structuredContent?.key_id)
            throw new Error(`mcp key: ${res.status} ${JSON.stringify(j)}`);
        },
      },
    ];
    // Warm-up: connections, the MCP server, JIT.
    for (const t of targets) await slice(t, 50, []);
    const samples = targets.map(() => [] as number[]);
    const busy = targets.map(() => 0);
    for (let done = 0; done < TOTAL; done += SLICE) {
      for (let j = 0; j < targets.length; j++) {
        const started = performance.now();
        await slice(targets[j], SLICE, samples[j]);
        busy[j] += performance.now() - started;
      }
    }
    const p50 = samples.map((s) => percentile(s, 50));
    targets.forEach((t, j) => {
      console.log(
        `${t.name.padEnd(40)} p50 ${fmt(p50[j])} ms  p99 ${fmt(percentile(samples[j], 99))} ms  ${((TOTAL / busy[j]) * 1000).toFixed(0)} req/s`,
      );
    });
    const ratio = p50[1] / p50[0];
    const keyRatio = p50[3] / p50[2];
    const pass = ratio <= GOAL;
    console.log(
      `auth-only pair (same work exactly): MCP get_key_info p50 / GET /v1/key p50 = ${keyRatio.toFixed(2)} (informational)`,
    );
    console.log(
      `MCP check_health p50 / keyed health p50 = ${ratio.toFixed(2)} (goal ≤ ${GOAL}, ${CONCURRENCY} concurrent clients, ${TOTAL} calls each): ${pass ? 'PASS' : 'FAIL'}`,
    );
    if (!pass) process.exitCode = 1;
  } finally {
    await app.close();
    await temporal.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
