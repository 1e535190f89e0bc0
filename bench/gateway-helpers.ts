/**
 * Servers of the gateway benchmark (bench/gateway.ts), each runnable in its own process as users
 * run them: the gateway (the real app) and the bare pass-through proxy it is compared with. With
 * the processes layout (the default) the bench client and the fake upstream stay in the bench's
 * process and each server gets its own, so the CPU a proxy spends per request does not compete
 * with the client's inside one event loop (both proxies get the same treatment); in the
 * one-process layout all of them run in the bench's process.
 *
 * A server process answers IPC messages: `profile-start`, `profile-stop` (writes an inspector CPU
 * profile of that process to the given path), `cpu`, `trace-start` / `trace-stop` (BENCH_TRACE=1:
 * first-token marks, bench/gateway-trace.ts) and `close`.
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { startBenchApp } from './helpers';
import { tuneV8ForServing } from '../workers/v8-flags';
import { installTrace, type ServerRecord } from './gateway-trace';

export type ServerKind = 'gateway' | 'proxy';

export interface BenchServer {
  url: string;
  /** A key with runtime:chat (gateway only). */
  key?: string;
  /** Starts an inspector CPU (or sampling heap) profile of the server's process. */
  profileStart(kind: ProfileKind): Promise<void>;
  /** Stops it and writes the profile (.cpuprofile or .heapprofile) to `file`. */
  profileStop(file: string): Promise<void>;
  /** CPU time (user + system, µs) its process used so far (the whole bench process when in-process). */
  cpuMicros(): Promise<number>;
  /** BENCH_TRACE=1, own process only: starts keeping first-token marks (bench/gateway-trace.ts). */
  traceStart(): Promise<void>;
  /** The marks of each request since `traceStart`, in order. */
  traceStop(): Promise<ServerRecord[]>;
  close(): Promise<void>;
}

/** The floor: a pass-through proxy with a keep-alive agent that only pipes bytes both ways. */
export async function startBareProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const up = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const fwd = http.request(
      {
        host: up.hostname,
        port: up.port,
        path: `${up.pathname}/chat/completions`,
        method: req.method,
        headers: req.headers,
        agent,
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function startHere(
  kind: ServerKind,
  upstream: string,
): Promise<{ url: string; key?: string; close(): Promise<void> }> {
  if (kind === 'proxy') return startBareProxy(upstream);
  // SVC_HTTP_FAST_PATH=false: every request through Koa (to compare with the fast path in one build).
  const fastPath = process.env.SVC_HTTP_FAST_PATH;
  const app = await startBenchApp({ OPENAI_BASE_URL: upstream, ...(fastPath ? { SVC_HTTP_FAST_PATH: fastPath } : {}) });
  return { url: app.url, key: await app.key(['runtime:chat']), close: () => app.close() };
}

export type ProfileKind = 'cpu' | 'heap';

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}
let running: { session: Session; kind: ProfileKind } | undefined;

/** CPU: inspector profiler at 100 µs. Heap: sampling heap profiler counting every allocation (collected ones too). */
async function profileStart(kind: ProfileKind): Promise<void> {
  const session = new Session();
  session.connect();
  if (kind === 'cpu') {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  } else {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  running = { session, kind };
}
async function profileStop(file: string): Promise<void> {
  if (!running) throw new Error('no profile running');
  const { session, kind } = running;
  const { profile } =
    kind === 'cpu' ? await session.post('Profiler.stop') : await session.post('HeapProfiler.stopSampling');
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
  running = undefined;
}

/** Starts the server in this process (`inProcess`) or in a child Node process of its own. */
export async function startServer(kind: ServerKind, upstream: string, inProcess: boolean): Promise<BenchServer> {
  if (inProcess) {
    const s = await startHere(kind, upstream);
    const noTrace = () => Promise.reject(new Error('BENCH_TRACE needs the processes layout'));
    return {
      ...s,
      profileStart,
      profileStop,
      cpuMicros: () => Promise.resolve(cpuMicros()),
      traceStart: noTrace,
      traceStop: noTrace,
    };
  }
  // BENCH_NODE_ARGS: Node options for the server processes (e.g. --trace-gc), as in the ws bench.
  const execArgv = [...process.execArgv, ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
  const child = fork(__filename, [kind, upstream], { execPath: process.execPath, execArgv, stdio: 'inherit' });
  type Reply = { type: string; url?: string; key?: string; error?: string; micros?: number; records?: ServerRecord[] };
  const replies: Array<(m: Reply) => void> = [];
  child.on('message', (m: { type: string }) => replies.shift()?.(m as never));
  const ask = (msg: unknown) =>
    new Promise<Reply>((resolve, reject) => {
      replies.push((m) => (m.type === 'error' ? reject(new Error(m.error)) : resolve(m)));
      if (msg !== undefined) child.send(msg as never);
    });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = await Promise.race([
    ask(undefined),
    exited.then(() => {
      throw new Error(`the ${kind} process exited before it was ready`);
    }),
  ]);
  return {
    url: ready.url!,
    key: ready.key,
    profileStart: async (kind) => void (await ask({ type: 'profile-start', kind })),
    profileStop: async (file) => void (await ask({ type: 'profile-stop', file })),
    cpuMicros: async () => (await ask({ type: 'cpu' })).micros!,
    traceStart: async () => void (await ask({ type: 'trace-start' })),
    traceStop: async () => (await ask({ type: 'trace-stop' })).records ?? [],
    close: async () => {
      child.send({ type: 'close' });
      // It ends once its server, pools and IPC channel are closed; a leftover handle must not hang the bench.
      const timer = setTimeout(() => child.kill(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// Child process entry: `node gateway-helpers.js <gateway|proxy> <upstream url>`.
if (require.main === module && process.send) {
  const send = process.send.bind(process);
  const [kind, upstream] = process.argv.slice(2) as [ServerKind, string];
  // As the service's entries (`npm start`, `npm run api`) set it; both servers alike.
  tuneV8ForServing();
  const trace = process.env.BENCH_TRACE === '1' ? installTrace() : undefined;
  startHere(kind, upstream).then(
    (s) => {
      send({ type: 'ready', url: s.url, key: s.key });
      process.on('message', (m: { type: string; file?: string; kind?: ProfileKind }) => {
        const reply = (p: Promise<void>, type: string) =>
          p.then(
            () => send({ type }),
            (err: Error) => send({ type: 'error', error: err.message }),
          );
        if (m.type === 'profile-start') void reply(profileStart(m.kind ?? 'cpu'), 'profiling');
        else if (m.type === 'profile-stop') void reply(profileStop(m.file!), 'profiled');
        else if (m.type === 'cpu') send({ type: 'cpu', micros: cpuMicros() });
        else if (m.type === 'trace-start') {
          if (trace) trace.start();
          send(trace ? { type: 'tracing' } : { type: 'error', error: 'BENCH_TRACE=1 was not set' });
        } else if (m.type === 'trace-stop') send({ type: 'trace', records: trace?.stop() ?? [] });
        else if (m.type === 'close') void s.close().finally(() => process.disconnect());
      });
    },
    (err: Error) => {
      console.error(err);
      process.exitCode = 1;
      process.disconnect();
    },
  );
}
