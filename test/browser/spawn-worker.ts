import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { testEnv } from '../helpers/harness';
import type { BrowserFixture } from './browser-harness';

const ROOT = path.resolve(__dirname, '../..');

/** A browser worker in a child process (browser-worker-child.ts) on the fixture's queue, for SIGKILL tests. */
export async function startChild(f: BrowserFixture): Promise<{ child: ChildProcess; workerId: string }> {
  const child = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'test/helpers/ts-register.js'), path.join(ROOT, 'test/browser/browser-worker-child.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: f.h.dbUrl,
        TEMPORAL_ADDRESS: testEnv().temporalAddress,
        TEMPORAL_TASK_QUEUE: f.h.taskQueue,
        SVC_BROWSER_ALLOW_HOSTS: f.pages.host,
        SVC_LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const workerId = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`browser worker child not ready within 60 s: ${stderr.slice(-2000)}`)),
      60_000,
    );
    child.stdout!.on('data', (d: Buffer) => {
      const m = /BROWSER_WORKER_READY (\S+)/.exec(d.toString());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`browser worker child exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
  return { child, workerId };
}
