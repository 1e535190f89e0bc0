import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from './harness';
import { testEnv } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const READY_S = 120;

/**
 * Starts a worker in a child process on the harness's database and task queue (TypeScript compiled on the fly
 * by SWC), so a test can SIGKILL it for real; resolves once it polls. `env` adds settings (upstream, SMTP...).
 */
export async function startChildWorker(
  h: Pick<Harness, 'dbUrl' | 'taskQueue' | 'config'>,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'bin/ts-register.js'), path.join(ROOT, 'test/helpers/worker-child.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: h.dbUrl,
        TEMPORAL_ADDRESS: h.config.temporal.address ?? testEnv().temporalAddress,
        TEMPORAL_TASK_QUEUE: h.taskQueue,
        WORKFLOW_BUNDLE_PATH: testEnv().bundlePath,
        SVC_LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    // Generous: compiling the worker on the fly takes tens of seconds when both cores are busy (two Jest workers).
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // never left running behind a failed test
      reject(new Error(`child worker not ready within ${READY_S} s: ${stderr.slice(-2000)}`));
    }, READY_S * 1000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('WORKER_READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child worker exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
  return child;
}
