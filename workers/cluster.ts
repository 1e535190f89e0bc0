import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, parseConfig } from '../schema/config';
import { prepareDatabase } from './database';
import { createLogger } from './logger';
import { waitForSignal } from './runtime';
import { startConfiguredTemporal } from './temporal-dev';

/**
 * `npm run cluster -- [--api N] [--workers M]`: one embedded Temporal dev server, N API processes on
 * consecutive ports after PORT, M worker processes, one PostgreSQL, and a round-robin front on PORT.
 * A child that dies is restarted after a second (kill one to watch the others carry on).
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { api: { type: 'string', default: '2' }, workers: { type: 'string', default: '2' } },
  });
  const apis = Number(values.api);
  const workers = Number(values.workers);
  if (!Number.isInteger(apis) || apis < 1 || apis > 16 || !Number.isInteger(workers) || workers < 1 || workers > 16) {
    throw new ConfigError('--api and --workers take a whole number from 1 to 16');
  }
  const config = parseConfig(process.env);
  const log = createLogger(config, 'svc-cluster');
  // Several processes share the database: PostgreSQL only, never the one-connection PGlite fallback.
  const database = await prepareDatabase(config, log, { embeddedFallback: false });
  let address = config.temporal.address;
  let stopTemporal = async () => {};
  if (!address) {
    const dev = await startConfiguredTemporal(config, log);
    address = dev.address;
    stopTemporal = dev.stop;
  }
  const env = { ...process.env, DATABASE_URL: database.url, TEMPORAL_ADDRESS: address };
  const ports = Array.from({ length: apis }, (_, i) => config.port + 1 + i);
  const children = [
    ...ports.map((port, i) =>
      supervise({
        name: `api-${i + 1}`,
        entry: 'api.js',
        // `--api` counts the API processes here and the front balances them: each child serves alone.
        env: { ...env, PORT: String(port), SVC_API_PROCESSES: '1' },
        log,
      }),
    ),
    ...Array.from({ length: workers }, (_, i) => supervise({ name: `worker-${i + 1}`, entry: 'worker.js', env, log })),
  ];
  const front = roundRobinFront(ports);
  await new Promise<void>((resolve) => front.listen(config.port, config.host, resolve));
  log.info(
    { front: `http://${config.host}:${config.port}/v1`, apis: ports, workers, temporal: address },
    'svc cluster ready',
  );
  await waitForSignal(log);
  front.close();
  await Promise.all(children.map((c) => c.stop()));
  await stopTemporal();
  await database.stop();
}

/** One child process (`dist/workers/<entry>`), restarted a second after it dies until stop() is called. */
function supervise(opts: {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  log: ReturnType<typeof createLogger>;
}): { stop(): Promise<void> } {
  let child: ChildProcess | undefined;
  let stopping = false;
  const start = () => {
    child = spawn(process.execPath, [path.join(__dirname, opts.entry)], {
      env: opts.env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    opts.log.info({ process: opts.name, pid: child.pid }, 'started');
    child.once('exit', (code, signal) => {
      if (stopping) return;
      opts.log.warn({ process: opts.name, code, signal }, 'exited; restarting in 1 s');
      setTimeout(start, 1000).unref();
    });
  };
  start();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child?.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

/**
 * The tiny front: each request (and WebSocket upgrade) goes to the next API port. The request body is read
 * first (capped), so a port that refuses the connection is skipped and the same request goes to the next:
 * a killed API process costs no request that had not reached it.
 */
export function roundRobinFront(ports: number[], host = '127.0.0.1', maxBody = 32 * 1024 * 1024): http.Server {
  let next = 0;
  const fail = (res: http.ServerResponse, status: number, error: string) => {
    if (!res.headersSent)
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error, code: status === 413 ? 'payload_too_large' : 'bad_gateway' }));
    else res.destroy();
  };
  const server = http.createServer((req, res) => {
    const first = next++;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBody) {
        fail(res, 413, 'request body too large for the cluster front');
        req.destroy();
      } else chunks.push(c);
    });
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      const tryPort = (attempt: number) => {
        const port = ports[(first + attempt) % ports.length];
        const upstream = http.request({ host, port, method: req.method, path: req.url, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          res.once('close', () => up.destroy());
        });
        upstream.once('error', (err: NodeJS.ErrnoException) => {
          // Retried elsewhere only when the request reached no process: a refused connection, or a kept-alive
          // socket to a process that has since died (reset before any answer).
          const unreached = err.code === 'ECONNREFUSED' || (err.code === 'ECONNRESET' && upstream.reusedSocket);
          if (unreached && attempt + 1 < ports.length && !res.headersSent) tryPort(attempt + 1);
          else fail(res, 502, 'no API process answered');
        });
        upstream.end(body);
      };
      tryPort(0);
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const port = ports[next++ % ports.length];
    const upstream = net.connect(port, host, () => {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.once('error', () => socket.destroy());
    socket.once('error', () => upstream.destroy());
  });
  return server;
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err instanceof ConfigError ? err.message : (err.stack ?? err.message));
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 2000).unref();
  });
}
