import { spawn, type ChildProcess } from 'node:child_process';
import dns from 'node:dns/promises';
import { accessSync, closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import type { Config } from '../schema/config';

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

/** Packages `go install -v` compiles for the CLI on a machine with an empty build cache (measured for v1.5.1). */
const ESTIMATED_PACKAGES = 1300;

/** TEMPORAL_CLI_PATH, then PATH, then our cache dir; undefined when none has it (nothing is built). */
export function findTemporalCli(opts: { cliPath?: string; cacheDir?: string }): string | undefined {
  if (opts.cliPath) {
    if (isExecutable(opts.cliPath)) return opts.cliPath;
    throw new Error(`TEMPORAL_CLI_PATH=${opts.cliPath} is not an executable file.`);
  }
  const cached = path.join(cacheDir(opts.cacheDir), 'bin', 'temporal');
  return onPath('temporal') ?? (isExecutable(cached) ? cached : undefined);
}

/**
 * Finds the `temporal` CLI (see findTemporalCli); otherwise builds it with Go into the cache dir,
 * showing one progress line, with Go's full output in `buildLog` when given. `path: null` lists what was tried.
 * @throws Error when TEMPORAL_CLI_PATH names something that is not executable
 */
export async function findOrBuildTemporalCli(opts: {
  cliPath?: string;
  cacheDir?: string;
  buildLog?: string;
  log: Logger;
}): Promise<{ path: string } | { path: null; attempts: string[]; bin: string }> {
  const found = findTemporalCli(opts);
  if (found) return { path: found };
  const bin = path.join(cacheDir(opts.cacheDir), 'bin');
  const cached = path.join(bin, 'temporal');
  const attempts: string[] = [];
  const go = onPath('go') ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) return { path: null, attempts: ['go: not found on PATH'], bin };
  mkdirSync(bin, { recursive: true });
  for (const tag of [TEMPORAL_CLI_VERSION, ...FALLBACK_TAGS]) {
    opts.log.info(
      { tag, into: bin, build_log: opts.buildLog },
      `Temporal CLI not found: building it with Go (${tag}); the first build takes about 3-10 minutes on 2 cores`,
    );
    const started = Date.now();
    const code = await goInstallWithProgress({ go, tag, bin, buildLog: opts.buildLog, log: opts.log });
    if (code === 0 && isExecutable(cached)) {
      opts.log.info({ seconds: Math.round((Date.now() - started) / 1000) }, 'Temporal CLI built');
      return { path: cached };
    }
    attempts.push(`go install temporal@${tag}: exit ${code}${opts.buildLog ? ` (see ${opts.buildLog})` : ''}`);
  }
  return { path: null, attempts, bin };
}

/** Elapsed or remaining time as `1m05s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** The one progress line: packages built of the estimate, elapsed, and an estimate of what is left. */
export function buildProgressLine(p: { built: number; downloaded: number; elapsedMs: number; total?: number }): string {
  const total = Math.max(p.total ?? ESTIMATED_PACKAGES, p.built);
  const head = `Temporal CLI build: ${p.built}/~${total} packages, ${formatDuration(p.elapsedMs)} elapsed`;
  if (p.built < 25) return p.downloaded ? `${head} (${p.downloaded} modules downloaded)` : head;
  return `${head}, ~${formatDuration((p.elapsedMs / p.built) * (total - p.built))} left`;
}

/** `go install -v`: each compiled package is one line on stderr; we count them instead of printing them. */
function goInstallWithProgress(opts: {
  go: string;
  tag: string;
  bin: string;
  buildLog?: string;
  log: Logger;
}): Promise<number> {
  return new Promise((resolve) => {
    let logFd: number | undefined;
    if (opts.buildLog) {
      mkdirSync(path.dirname(opts.buildLog), { recursive: true });
      logFd = openSync(opts.buildLog, 'a');
    }
    const child = spawn(opts.go, ['install', '-v', `github.com/temporalio/cli/cmd/temporal@${opts.tag}`], {
      env: { ...process.env, GOBIN: opts.bin, GOFLAGS: '-buildvcs=false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = Date.now();
    const state = { built: 0, downloaded: 0 };
    const tty = process.stderr.isTTY === true;
    let lastLogged = 0;
    const render = (final = false) => {
      const line = buildProgressLine({ ...state, elapsedMs: Date.now() - started });
      if (tty) process.stderr.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
      else if (final || Date.now() - lastLogged > 20_000) {
        lastLogged = Date.now();
        opts.log.info(line);
      }
    };
    const onLine = (line: string) => {
      if (logFd !== undefined) writeSync(logFd, `${line}\n`);
      if (line.startsWith('go: downloading')) state.downloaded++;
      else if (line && !line.startsWith('go:') && !line.startsWith('#') && !line.startsWith(' ')) state.built++;
    };
    for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', onLine);
    const timer = setInterval(() => render(), tty ? 500 : 5000);
    child.once('error', (err) => {
      if (logFd !== undefined) writeSync(logFd, `${err.message}\n`);
    });
    child.once('close', (code) => {
      clearInterval(timer);
      render(true);
      if (logFd !== undefined) closeSync(logFd);
      resolve(code ?? 1);
    });
  });
}

/** True when this machine can reach the SDK's download host (a DNS answer within a second); offline: false at once. */
export async function canDownload(host = 'temporal.download', timeoutMs = 1000): Promise<boolean> {
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
  const lookup = dns.lookup(host).then(
    () => true,
    () => false,
  );
  return Promise.race([lookup, timeout]);
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

/**
 * Dynamic config every dev server of ours starts with (embedded `npm start`, tests, benchmarks);
 * a caller's `dynamicConfig` overrides a key.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  // Updates (sovereign ticks) are on by default in recent servers; stated so older CLIs agree.
  'frontend.enableUpdateWorkflowExecution': true,
  // Eager Workflow Start (the all-in-one process starts through its worker's connection): on by default
  // in recent servers; stated so older CLIs agree.
  'system.enableEagerWorkflowStart': true,
  // The dev server has ONE history shard, and each shard reads its transfer queue (the tasks that
  // hand activities and workflow tasks to matching) at most 20 times a second by default. Every
  // workflow of the installation shares that budget: under steady work each activity dispatch
  // and each workflow task after an activity waited for the next 50 ms slot (a 10-step chain of
  // no-op activities took ~1,050 ms; with 1,000 reads a second ~180 ms). Reads are still made
  // only when tasks are waiting (the queue is notified), so an idle server does not read more.
  'history.transferProcessorMaxPollRPS': 1000,
  // A workflow task in flight holds the events that arrive meanwhile (an activity's completion is two: started
  // and completed), and the server force-closes the task once more than 100 are held (the task fails with
  // FORCE_CLOSE_COMMAND, the worker drops its cached run and replays the history). A task's fan-out reaches 200
  // steps, so 51 branches ending during one workflow task did it: seen in 1-2 of 30 100-wide runs on either
  // path, a failed workflow task in the history of a run that went well. 1,000 covers a task's widest fan-out
  // twice over; the 2 MiB limit on those events' size stays.
  'history.maximumBufferedEventsBatch': 1000,
};

/** Search attributes and dynamic config every dev server of ours starts with (CLI or SDK download). */
export function devServerExtraArgs(dynamicConfig: Record<string, unknown> = {}): string[] {
  const args = SEARCH_ATTRIBUTES.flatMap((sa) => ['--search-attribute', sa]);
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...dynamicConfig }))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
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
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--namespace',
    opts.namespace,
    '--log-level',
    'warn',
    '--log-format',
    'json',
  ];
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
    throw new Error(
      'the SDK dev-server fallback needs @temporalio/testing, a dev dependency (not installed with npm ci --omit=dev)',
    );
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
 * The embedded default: our CLI when found; else, where the network allows, the SDK's own dev-server
 * download (seconds); else the CLI built with Go (minutes, one progress line); else an error that says
 * how to install it.
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
  /** Go's full build output, when the CLI has to be built. */
  buildLog?: string;
  log: Logger;
}): Promise<Omit<DevServer, 'child'>> {
  const port = (await portInUse(opts.port)) ? await freePort() : opts.port;
  const uiPort = (await portInUse(opts.uiPort)) ? await freePort() : opts.uiPort;
  const attempts: string[] = [];
  const cli = findTemporalCli(opts);
  if (cli) return startDevServer({ ...opts, cli, port, uiPort });
  // Where the SDK's prebuilt dev server can be downloaded it takes seconds; the Go build takes minutes.
  if (await canDownload()) {
    try {
      return await startSdkDevServer({ ...opts, port, uiPort });
    } catch (err) {
      attempts.push(`SDK dev-server download: ${(err as Error).message.split('\n')[0]}`);
    }
  } else {
    attempts.push('SDK dev-server download: skipped (no network)');
  }
  const found = await findOrBuildTemporalCli(opts);
  if (found.path !== null) return startDevServer({ ...opts, cli: found.path, port, uiPort });
  throw new Error(
    `No Temporal server could be started. Tried:\n  - ${[...attempts, ...found.attempts].join('\n  - ')}\n` +
      `Install the CLI with Go (GOBIN=${found.bin} go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}), ` +
      'set TEMPORAL_CLI_PATH to an existing binary, or set TEMPORAL_ADDRESS to a running cluster.',
  );
}

/**
 * The embedded dev server as the process entries configure it: state, logs and build log under SVC_DATA_DIR.
 * @throws Error listing each attempt (see startEmbeddedTemporal)
 */
export function startConfiguredTemporal(
  config: Pick<Config, 'temporal' | 'cacheDir' | 'dataDir'>,
  log: Logger,
): Promise<Omit<DevServer, 'child'>> {
  const dataDir = path.resolve(config.dataDir);
  return startEmbeddedTemporal({
    cliPath: config.temporal.cliPath,
    cacheDir: config.cacheDir,
    port: config.temporal.devPort,
    uiPort: config.temporal.uiPort,
    dbFile: path.join(dataDir, 'temporal.db'),
    logFile: path.join(dataDir, 'temporal.log'),
    buildLog: path.join(dataDir, 'logs', 'temporal-build.log'),
    namespace: config.temporal.namespace,
    log,
  });
}
