import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * A few child processes that each run one task at a time, for work that must not take the service down with it:
 * each process's data segment can be capped by the operating system (`prlimit --data`), a task past its deadline
 * has its process killed, and a process that dies under a task fails only that task (the next task starts a new
 * one). Idle processes hold no reference on the parent's event loop (a parent that is done exits without waiting
 * for them) and end after `idleMs`.
 *
 * Our own rather than workerpool's `process` workers: those keep the parent alive for as long as one is idle and
 * offer no way to release it, and they pass a dying child's V8 report through to the parent's stderr.
 *
 * The child is a module that answers each `{ id, task }` message with `{ id, reply }` (see `extract-process.ts`).
 */
export interface ProcessPoolOptions {
  /** The child's module (a `.ts` file runs through `bin/ts-register.js`). */
  entry: string;
  nodeArgs?: string[];
  /** Cap of each child's data segment in MiB (0: none, or when `prlimit` is not installed). */
  memoryMb: number;
  size: number;
  /** Tasks waiting for a process beyond this are refused (`QueueFull`). */
  maxQueue: number;
  idleMs: number;
}

/** Why a task did not get its reply. */
export class ProcessTaskError extends Error {
  constructor(
    readonly reason: 'timeout' | 'queue_full' | 'out_of_memory' | 'crashed',
    message: string,
  ) {
    super(message);
  }
}

const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));
/**
 * How V8 and Node word memory that could not be had: a child's last words on stderr, or an allocation a child caught
 * (`extract-process.ts` reports those itself).
 */
export const OUT_OF_MEMORY = /out of memory|allocation failed/i;
const STDERR_TAIL = 4096;

interface Job<R> {
  task: unknown;
  timeoutMs: number;
  /** The deadline counts from `run`: time spent waiting for a process is part of it. */
  deadline: number;
  /** While queued: fails the job at its deadline. */
  waiting?: NodeJS.Timeout;
  resolve(reply: R): void;
  reject(err: Error): void;
}

interface Worker {
  child: ChildProcess;
  stderr: string;
  idleSince: number;
  job?: Job<unknown> & { id: number; timer: NodeJS.Timeout };
}

export class ProcessPool<R> {
  private readonly workers = new Set<Worker>();
  private readonly queue: Job<R>[] = [];
  private nextId = 1;
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly opts: ProcessPoolOptions) {}

  /** @throws ProcessTaskError */
  run(task: unknown, timeoutMs: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const job: Job<R> = { task, timeoutMs, deadline: Date.now() + timeoutMs, resolve, reject };
      const idle = [...this.workers].find((w) => !w.job);
      if (idle) return this.start(idle, job);
      if (this.workers.size < this.opts.size) return this.start(this.spawn(), job);
      if (this.queue.length >= this.opts.maxQueue)
        return reject(new ProcessTaskError('queue_full', `${this.queue.length} tasks are already waiting`));
      job.waiting = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(job), 1);
        reject(new ProcessTaskError('timeout', `no process free within ${timeoutMs} ms`));
      }, timeoutMs);
      this.queue.push(job);
    });
  }

  private spawn(): Worker {
    const nodeArgs = [
      ...(this.opts.entry.endsWith('.ts') ? ['-r', require.resolve('../../bin/ts-register.js')] : []),
      ...(this.opts.nodeArgs ?? []),
    ];
    const capped = this.opts.memoryMb > 0 && PRLIMIT !== undefined;
    const child = fork(this.opts.entry, [], {
      serialization: 'advanced', // bytes cross as bytes
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // prlimit sets the cap and runs node in its place; the IPC channel and the environment carry over.
      ...(capped
        ? { execPath: PRLIMIT, execArgv: [`--data=${this.opts.memoryMb * 1024 * 1024}`, process.execPath, ...nodeArgs] }
        : { execArgv: nodeArgs }),
    });
    const worker: Worker = { child, stderr: '', idleSince: Date.now() };
    this.workers.add(worker);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      worker.stderr = (worker.stderr + text).slice(-STDERR_TAIL);
    });
    child.on('message', (m: { id: number; reply: unknown }) => {
      const job = worker.job;
      if (!job || m?.id !== job.id) return;
      clearTimeout(job.timer);
      worker.job = undefined;
      job.resolve(m.reply);
      this.release(worker);
    });
    let over = false;
    const ended = (how: string) => {
      if (over) return;
      over = true;
      this.workers.delete(worker);
      const job = worker.job;
      worker.job = undefined;
      if (job) {
        clearTimeout(job.timer);
        // Its error line if it wrote one (Node ends with a stack and its version), else its last line.
        const lines = worker.stderr
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean);
        const lastWords = (lines.find((l) => /\b(Error|FATAL)\b/.test(l)) ?? lines.at(-1) ?? '').slice(0, 300);
        job.reject(
          OUT_OF_MEMORY.test(worker.stderr)
            ? new ProcessTaskError('out_of_memory', `the process ran out of memory (${this.opts.memoryMb} MiB cap)`)
            : new ProcessTaskError('crashed', `the process ${how}: ${lastWords}`),
        );
      }
      // Work still waiting gets a new process.
      const next = this.queue.shift();
      if (next) this.start(this.spawn(), next);
    };
    // A process that could not start reports only 'error'; a failed send ends in 'exit'.
    child.on('error', (err) => {
      if (child.pid === undefined) ended(`could not start (${err.message})`);
    });
    child.on('exit', (code, signal) => ended(`ended (code ${code}, signal ${signal})`));
    this.sweeper ??= setInterval(() => this.sweep(), Math.max(1000, this.opts.idleMs / 2)).unref();
    return worker;
  }

  private start(worker: Worker, job: Job<R>): void {
    clearTimeout(job.waiting);
    const id = this.nextId++;
    const timer = setTimeout(
      () => {
        const current = worker.job;
        worker.job = undefined;
        current?.reject(new ProcessTaskError('timeout', `no reply within ${job.timeoutMs} ms`));
        void this.kill(worker);
      },
      Math.max(0, job.deadline - Date.now()),
    );
    worker.job = { ...(job as Job<unknown>), id, timer };
    this.hold(worker, true);
    worker.child.send({ id, task: job.task }, (err) => {
      if (err && worker.job?.id === id) void this.kill(worker); // reported through 'exit'
    });
  }

  private release(worker: Worker): void {
    const next = this.queue.shift();
    if (next) return this.start(worker, next);
    worker.idleSince = Date.now();
    this.hold(worker, false);
  }

  /** A busy process keeps the parent's event loop alive; an idle one does not. */
  private hold(worker: Worker, busy: boolean): void {
    const { child } = worker;
    const handles = [child, child.channel, child.stderr] as Array<{ ref?(): void; unref?(): void } | null | undefined>;
    for (const h of handles) (busy ? h?.ref : h?.unref)?.call(h);
  }

  private sweep(): void {
    const now = Date.now();
    for (const w of this.workers) if (!w.job && now - w.idleSince >= this.opts.idleMs) void this.kill(w);
    if (this.workers.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private kill(worker: Worker): Promise<void> {
    const { child } = worker;
    this.workers.delete(worker); // no new task goes to a process being killed
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
