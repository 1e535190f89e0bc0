/**
 * WebSocket bench: 1,000 clients in a separate process, the server sending 10 frames/s for 10 s
 * through the real path (NOTIFY on PostgreSQL → each API process's LISTEN → validation → send).
 * Frame delay = receive time − publish time (same machine clock). Goal: p99 ≤ 50 ms.
 * Run: npm run -s bench -- ws   (needs PostgreSQL on 127.0.0.1:5432)
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { publishDispatch } from '../activities/live/publish';
import { createDb } from '../activities/store/db';
import { createApp } from '../api/app';
import { attachLiveSocket } from '../api/live/socket';
import { parseConfig } from '../schema/config';
import { freshDatabase } from '../test/helpers/harness';
import { fmt, percentile } from './helpers';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const RATE = 10;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const GOAL_P99_MS = 50;

async function main(): Promise<void> {
  const database = await freshDatabase({
    base: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432',
    prefix: 'svc_bench',
  });
  const config = parseConfig({ DATABASE_URL: database.url, SVC_LOG_LEVEL: 'silent' });
  const db = await createDb({ url: database.url, maxConnections: 5 });
  const connection = Connection.lazy({ address: '127.0.0.1:7233' });
  const app = createApp({
    config,
    db,
    log: pino({ level: 'silent' }),
    temporal: { connection, client: new Client({ connection }) },
  });
  const server = http.createServer(app.callback());
  const live = attachLiveSocket(server, app, { maxConnections: CLIENTS + 10 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ws`;
  const child = spawn(process.execPath, [path.join(__dirname, 'ws-load.js'), url, String(CLIENTS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const next = () => new Promise<string>((r) => lines.once('line', r));
  try {
    const ready = JSON.parse(await next()) as { ready: number };
    while (!live.listener.connected) await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    for (let i = 0; i < RATE * SECONDS; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await publishDispatch(db, `bench-${(performance.timeOrigin + performance.now()).toFixed(3)}`);
    }
    await new Promise((r) => setTimeout(r, 1000)); // let the last frames arrive
    const answer = next();
    child.stdin.write('stop\n');
    const { delays, closed } = JSON.parse(await answer) as { delays: number[]; closed: number };
    const expected = ready.ready * RATE * SECONDS;
    const p99 = percentile(delays, 99);
    console.log(
      `${ready.ready} clients, ${RATE} frames/s for ${SECONDS} s: ${delays.length}/${expected} frames received, ${closed} closed by the server`,
    );
    console.log(
      `frame delay p50 ${fmt(percentile(delays, 50))} ms  p99 ${fmt(p99)} ms  max ${fmt(Math.max(...delays))} ms`,
    );
    const pass = delays.length === expected && p99 <= GOAL_P99_MS;
    console.log(`p99 ≤ ${GOAL_P99_MS} ms and every frame delivered: ${pass ? 'PASS' : 'FAIL'}`);
    if (!pass) process.exitCode = 1;
  } finally {
    child.kill();
    await live.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await connection.close().catch(() => undefined);
    await db.end();
    await database.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
