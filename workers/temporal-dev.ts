import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, openSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
/** Neighbouring tags tried when the pinned one does not build. */
const FALLBACK_TAGS = ['v1.5.0', 'v1.4.1'];
export const SEARCH_ATTRIBUTES = ['SvcTenant=Keyword', 'SvcKind=Keyword', 'SvcSurface=Keyword'];

export function cacheDir(override?: string): string {
  if (override) return path.resolve(override);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'svc-runtime');
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && isExecutable(p)) return p;
  }
  return undefined;
}

/**
 * Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then our cache dir; otherwise builds
 * it with Go into the cache dir (progress shown). `path: null` lists what was tried.
 * @throws Error when TEMPORAL_CLI_PATH names something that is not executable
 */
export async function findOrBuildTemporalCli(opts: {
  cliPath?: string;
  cacheDir?: string;
  log: Logger;
}): Promise<{ path: string } | { path: null; attempts: string[]; bin: string }> {
  const { log } = opts;
  if (opts.cliPath) {
    if (isExecutable(opts.cliPath)) return { path: opts.cliPath };
    throw new Error(`TEMPORAL_CLI_PATH=${opts.cliPath} is not an executable file.`);
  }
  const fromPath = onPath('temporal');
  if (fromPath) return { path: fromPath };
  const bin = path.join(cacheDir(opts.cacheDir), 'bin');
  const cached = path.join(bin, 'temporal');
  if (isExecutable(cached)) return { path: cached };

  const attempts: string[] = [];
  const go = onPath('go') ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (go) {
    mkdirSync(bin, { recursive: true });
    for (const tag of [TEMPORAL_CLI_VERSION, ...FALLBACK_TAGS]) {
      log.info({ tag, into: bin }, `Temporal CLI not found: building it with Go (${tag}); the first build takes a few minutes`);
      const started = Date.now();
      const r = spawnSync(go, ['install', '-v', `github.com/temporalio/cli/cmd/temporal@${tag}`], {
        env: { ...process.env, GOBIN: bin, GOFLAGS: '-buildvcs=false' },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      if (r.status === 0 && isExecutable(cached)) {
        log.info({ seconds: Math.round((Date.now() - started) / 1000) }, 'Temporal CLI built');
        return { path: cached };
      }
      attempts.push(`go install temporal@${tag}: exit ${r.status ?? r.signal}`);
    }
  } else {
    attempts.push('go: not found on PATH');
  }

  return { path: null, attempts, bin };
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal server exited with code ${child.exitCode}`);
    if (await portInUse(port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`temporal server did not listen on ${port} within ${timeoutMs} ms`);
}

/** Search attributes and dynamic config every dev server of ours starts with (CLI or SDK download). */
function devServerExtraArgs(dynamicConfig: Record<string, unknown> = {}): string[] {
  const args = SEARCH_ATTRIBUTES.flatMap((sa) => ['--search-attribute', sa]);
  // Updates (sovereign ticks) are on by default in recent servers; stated so older CLIs agree.
  args.push('--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true');
  for (const [key, value] of Object.entries(dynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  return args;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` on 127.0.0.1 with our search attributes. With `dbFile`
 * the state survives restarts; without it the server is in memory (tests).
 */
export async function startDevServer(opts: {
  cli: string;
  port: number;
  uiPort?: number;
  dbFile?: string;
  namespace: string;
  logFile?: string;
  /** Extra dynamic config, e.g. a low `limit.historyCount.suggestContinueAsNew` in tests. */
  dynamicConfig?: Record<string, unknown>;
  log: Logger;
}): Promise<DevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--namespace', opts.namespace, '--log-level', 'warn', '--log-format', 'json'];
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.dbFile) {
    mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  args.push(...devServerExtraArgs(opts.dynamicConfig));
  let out: number | 'ignore' = 'ignore';
  if (opts.logFile) {
    mkdirSync(path.dirname(opts.logFile), { recursive: true });
    out = openSync(opts.logFile, 'a');
  }
  const child = spawn(opts.cli, args, { stdio: ['ignore', out, out], detached: false });
  opts.log.info({ port: opts.port, ui_port: opts.uiPort, db: opts.dbFile ?? 'memory' }, 'starting Temporal dev server');
  await waitForPort(opts.port, child, 60_000);
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : undefined,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/**
 * The dev server the Temporal SDK downloads itself (`TestWorkflowEnvironment.createLocal`), with our
 * search attributes and dynamic config: the fallback when no CLI can be found or built.
 * @throws Error when the download or the start fails
 */
export async function startSdkDevServer(opts: {
  port: number;
  uiPort?: number;
  dbFile?: string;
  namespace: string;
  dynamicConfig?: Record<string, unknown>;
  log: Logger;
}): Promise<Omit<DevServer, 'child'>> {
  opts.log.info({ port: opts.port }, 'trying the Temporal SDK download of the dev server');
  // A dev dependency, loaded only here: an `npm ci --omit=dev` image starts without it (CLI or TEMPORAL_ADDRESS).
  const { TestWorkflowEnvironment } = await import('@temporalio/testing').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'MODULE_NOT_FOUND' && err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new Error('the SDK dev-server fallback needs @temporalio/testing, a dev dependency (not installed with npm ci --omit=dev)');
  });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: '127.0.0.1',
      port: opts.port,
      ...(opts.uiPort ? { ui: true, uiPort: opts.uiPort } : {}),
      ...(opts.dbFile ? { dbFilename: opts.dbFile } : {}),
      namespace: opts.namespace,
      extraArgs: devServerExtraArgs(opts.dynamicConfig),
    },
  });
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : undefined,
    stop: () => env.teardown(),
  };
}

/**
 * The embedded default: our CLI (found or built), else the SDK's own dev-server download,
 * else an error that says how to install it.
 * @throws Error listing each attempt
 */
export async function startEmbeddedTemporal(opts: {
  cliPath?: string;
  cacheDir?: string;
  port: number;
  uiPort: number;
  dbFile: string;
  namespace: string;
  logFile: string;
  log: Logger;
}): Promise<Omit<DevServer, 'child'>> {
  const found = await findOrBuildTemporalCli(opts);
  const port = (await portInUse(opts.port)) ? await freePort() : opts.port;
  const uiPort = (await portInUse(opts.uiPort)) ? await freePort() : opts.uiPort;
  if (found.path !== null) return startDevServer({ ...opts, cli: found.path, port, uiPort });
  try {
    return await startSdkDevServer({ ...opts, port, uiPort });
  } catch (err) {
    found.attempts.push(`SDK dev-server download: ${(err as Error).message.split('\n')[0]}`);
  }
  throw new Error(
    `No Temporal server could be started. Tried:\n  - ${found.attempts.join('\n  - ')}\n` +
      `Install the CLI with Go (GOBIN=${found.bin} go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}), ` +
      'set TEMPORAL_CLI_PATH to an existing binary, or set TEMPORAL_ADDRESS to a running cluster.',
  );
}
