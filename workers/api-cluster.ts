import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { MAX_API_PROCESSES } from '../schema/config';

/**
 * Several API processes on one listen port (SVC_API_PROCESSES, `npm run api`), through node:cluster: the
 * primary holds the port and hands each new connection to the next process (round robin), every process is a
 * full replica (its own pool, Temporal client, LISTEN connection, WebSocket clients). Why: writing one frame
 * to 1,000 loopback sockets is ~20 µs of kernel time per socket in the writing process, so one process's
 * broadcast to all its clients takes tens of ms; N processes write their shares in parallel.
 */

/** `auto` → the cores this process may use (at most MAX_API_PROCESSES); a number as it is. */
export function apiProcessCount(setting: number | 'auto', cores = os.availableParallelism()): number {
  return setting === 'auto' ? Math.max(1, Math.min(MAX_API_PROCESSES, cores)) : setting;
}

type RegistryJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** IPC between the primary and its API processes (everything else on the channel is not ours). */
type Message =
  | { svc: 'ready' }
  | { svc: 'metrics'; id: number; metrics?: RegistryJson }
  | { svc: 'cluster-metrics'; id: number; text?: string; error?: string };

const isMessage = (m: unknown): m is Message =>
  typeof m === 'object' && m !== null && typeof (m as { svc?: unknown }).svc === 'string';

/** How long the primary waits for a process's metrics (a process blocked longer is left out). */
const METRICS_TIMEOUT_MS = 3000;

export interface ApiProcesses {
  /** Resolves once every process has served once; rejects when one exits before (a start-up failure). */
  readonly ready: Promise<void>;
  /** Ids of the processes running now. */
  pids(): number[];
  /** Each answering process's metrics (its registry as JSON), asked over IPC. */
  metricsByProcess(timeoutMs?: number): Promise<Array<{ pid: number; metrics: RegistryJson }>>;
  /** SIGTERM to every process (each drains), SIGKILL after `graceMs`; resolves once all have exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `count` API processes (`exec`, default this process's entry) and supervises them: one that dies is
 * replaced, after `restartDelayMs`, doubling (up to 30 s) while replacements die before serving. Call in the
 * primary only; the processes call `joinApiProcesses` and `reportApiReady`.
 */
export function startApiProcesses(opts: {
  count: number;
  log: Logger;
  /** Added to each process's environment (on top of this process's). */
  env?: NodeJS.ProcessEnv;
  exec?: string;
  execArgv?: string[];
  restartDelayMs?: number;
}): ApiProcesses {
  if (!cluster.isPrimary) throw new Error('startApiProcesses runs in the primary process only');
  const baseDelay = opts.restartDelayMs ?? 1000;
  cluster.setupPrimary({
    ...(opts.exec ? { exec: opts.exec, args: [] } : {}),
    ...(opts.execArgv ? { execArgv: opts.execArgv } : {}),
  });
  interface Slot {
    worker?: Worker;
    served: boolean;
    delay: number;
    timer?: NodeJS.Timeout;
  }
  const slots: Slot[] = Array.from({ length: opts.count }, () => ({ served: false, delay: baseDelay }));
  const pending = new Map<number, (m: Message) => void>();
  let nextId = 0;
  let stopping = false;
  let starting = true;
  let settleReady!: (err?: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = (err) => (err ? reject(err) : resolve());
  });
  ready.catch(() => undefined);

  const ask = (w: Worker, m: Message & { id: number }, timeoutMs: number) =>
    new Promise<Message | undefined>((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(m.id);
        resolve(undefined);
      }, timeoutMs);
      pending.set(m.id, (answer) => {
        clearTimeout(timer);
        pending.delete(m.id);
        resolve(answer);
      });
      try {
        w.send(m);
      } catch {
        clearTimeout(timer);
        pending.delete(m.id);
        resolve(undefined);
      }
    });

  const metricsByProcess = async (timeoutMs = METRICS_TIMEOUT_MS) => {
    const live = slots.flatMap((s) => (s.worker?.isConnected() ? [s.worker] : []));
    const answers = await Promise.all(
      live.map(async (w) => {
        const a = await ask(w, { svc: 'metrics', id: nextId++ }, timeoutMs);
        return a?.svc === 'metrics' && a.metrics ? [{ pid: w.process.pid!, metrics: a.metrics }] : [];
      }),
    );
    return answers.flat();
  };

  /** A process asked for everybody's metrics (GET /v1/metrics): summed per series by prom-client. */
  const answerClusterMetrics = async (w: Worker, id: number) => {
    let reply: Message;
    try {
      const all = await metricsByProcess();
      const text = await AggregatorRegistry.aggregate(all.map((a) => a.metrics)).metrics();
      reply = { svc: 'cluster-metrics', id, text };
    } catch (err) {
      reply = { svc: 'cluster-metrics', id, error: (err as Error).message };
    }
    if (w.isConnected()) w.send(reply);
  };

  const fork = (i: number) => {
    const slot = slots[i];
    slot.timer = undefined;
    const w = cluster.fork(opts.env);
    slot.worker = w;
    opts.log.info({ process: i + 1, pid: w.process.pid }, 'api process started');
    w.on('message', (m: unknown) => {
      if (!isMessage(m)) return;
      if (m.svc === 'ready') {
        slot.served = true;
        slot.delay = baseDelay;
        opts.log.info({ process: i + 1, pid: w.process.pid }, 'api process ready');
        if (starting && slots.every((s) => s.served)) {
          starting = false;
          settleReady();
        }
      } else if (m.svc === 'metrics') pending.get(m.id)?.(m);
      else if (m.svc === 'cluster-metrics' && m.text === undefined && m.error === undefined)
        void answerClusterMetrics(w, m.id);
    });
    w.once('exit', (code, signal) => {
      if (slot.worker === w) slot.worker = undefined;
      if (stopping) return;
      if (starting && !slot.served) {
        // The first start failed (a bad setting, no database...): every replacement would fail alike.
        starting = false;
        settleReady(new Error(`API process ${i + 1} exited before serving (code ${code}, signal ${signal})`));
        return;
      }
      opts.log.warn(
        { process: i + 1, pid: w.process.pid, code, signal, restart_in_ms: slot.delay },
        'api process exited; replacing it',
      );
      slot.timer = setTimeout(() => fork(i), slot.delay);
      slot.delay = Math.min(30_000, slot.delay * 2);
    });
  };
  slots.forEach((_, i) => fork(i));

  return {
    ready,
    pids: () => slots.flatMap((s) => (s.worker?.process.pid ? [s.worker.process.pid] : [])),
    metricsByProcess,
    async stop(graceMs = 15_000) {
      stopping = true;
      for (const s of slots) clearTimeout(s.timer);
      await Promise.all(
        slots.map(async (s) => {
          const w = s.worker;
          if (!w || w.process.exitCode !== null || w.process.signalCode !== null) return;
          const exited = new Promise<void>((r) => w.once('exit', () => r()));
          w.process.kill('SIGTERM');
          const kill = setTimeout(() => w.process.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(kill);
        }),
      );
    },
  };
}

/**
 * In an API process started by `startApiProcesses`: answers the primary's requests for this process's
 * metrics, and returns the cluster-wide exposition (every process's series summed) for GET /v1/metrics.
 * @throws from the returned function when the primary does not answer within a few seconds
 */
export function joinApiProcesses(registry: Registry): () => Promise<string> {
  const waiting = new Map<number, (m: Message) => void>();
  let nextId = 0;
  process.on('message', (m: unknown) => {
    if (!isMessage(m)) return;
    if (m.svc === 'metrics')
      void registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ svc: 'metrics', id: m.id, metrics } satisfies Message),
        () => undefined,
      );
    else if (m.svc === 'cluster-metrics') waiting.get(m.id)?.(m);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the other API processes did not report their metrics in time'));
      }, METRICS_TIMEOUT_MS + 1000);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (m.svc === 'cluster-metrics' && m.text !== undefined) resolve(m.text);
        else reject(new Error(m.svc === 'cluster-metrics' ? (m.error ?? 'no metrics') : 'no metrics'));
      });
      process.send?.({ svc: 'cluster-metrics', id } satisfies Message);
    });
}

/** In an API process started by `startApiProcesses`: tells the primary this process serves. */
export function reportApiReady(): void {
  process.send?.({ svc: 'ready' } satisfies Message);
}

/** Whether this process is one of several API processes started by `startApiProcesses`. */
export function inApiCluster(): boolean {
  return cluster.isWorker;
}
