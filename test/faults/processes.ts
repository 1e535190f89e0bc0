import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const TS = path.join(ROOT, 'bin/ts-register.js');

/** One of the cluster's processes, restartable: what a supervisor (npm run cluster, compose) does. */
export interface Proc {
  name: string;
  child: ChildProcess;
  /** kill -9: no shutdown code runs, connections simply vanish. */
  kill9(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The last 20 kB the process printed (for failure messages). */
  output(): string;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', () => r()));
}

/** A process from source (SWC on the fly), ready once `ready()` says so (polled every 200 ms, 90 s at most). */
export function proc(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  ready: (out: string) => Promise<boolean> | boolean,
): Proc {
  let out = '';
  const p: Proc = {
    name,
    output: () => out,
    child: undefined as unknown as ChildProcess,
    async start() {
      p.child = spawn(process.execPath, ['-r', TS, path.join(ROOT, script)], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      p.child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
      p.child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        if (p.child.exitCode !== null) throw new Error(`${name} exited with ${p.child.exitCode}: ${out.slice(-2000)}`);
        if (await ready(out)) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`${name} not ready within 90 s: ${out.slice(-2000)}`);
    },
    async kill9() {
      p.child.kill('SIGKILL');
      await exited(p.child);
    },
    async stop() {
      if (!p.child || p.child.exitCode !== null || p.child.signalCode !== null) return;
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
      await exited(p.child);
      clearTimeout(timer);
    },
  };
  return p;
}

/** An API process on `port` (workers/api.ts), ready when its health answers. */
export function apiProc(name: string, port: number, env: NodeJS.ProcessEnv): Proc {
  return proc(name, 'workers/api.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' }, () =>
    fetch(`http://127.0.0.1:${port}/v1/health`).then(
      (r) => r.status === 200,
      () => false,
    ),
  );
}

/** A worker process (the test helper entry, with the run's prebuilt workflow bundle), ready once it polls. */
export function workerProc(name: string, env: NodeJS.ProcessEnv): Proc {
  return proc(name, 'test/helpers/worker-child.ts', env, (out) => out.includes('WORKER_READY'));
}
