import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from './harness';
import { testEnv } from './harness';

const ROOT = path.resolve(__dirname, '../..');
/** Generous: compiling on the fly takes tens of seconds when both cores are busy (two Jest workers). */
const READY_S = 120;

/**
 * Runs `file` (TypeScript, compiled on the fly by SWC) in a child process with `env` added, and resolves
 * once a line of its stdout matches `ready` (with the match). A child that exits first or is not ready in
 * time is killed and the promise rejects with the end of its stderr.
 */
export async function spawnTsChild(
  file: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const name = path.basename(file);
  const child = spawn(process.execPath, ['-r', path.join(ROOT, 'bin/ts-register.js'), path.join(ROOT, file)], {
    cwd: ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // never left running behind a failed test
      reject(new Error(`${name} not ready within ${READY_S} s: ${stderr.slice(-2000)}`));
    }, READY_S * 1000);
    child.stdout!.on('data', (d: Buffer) => {
      const m = ready.exec(d.toString());
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
  return { child, match };
}

/**
 * Starts a worker in a child process on the harness's database and task queue, so a test can SIGKILL
 * it for real; resolves once it polls. `env` adds settings (upstream, SMTP...).
 */
export async function startChildWorker(
  h: Pick<Harness, 'dbUrl' | 'taskQueue' | 'config'>,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const { child } = await spawnTsChild(
    'test/helpers/worker-child.ts',
    {
      DATABASE_URL: h.dbUrl,
      TEMPORAL_ADDRESS: h.config.temporal.address ?? testEnv().temporalAddress,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      WORKFLOW_BUNDLE_PATH: testEnv().bundlePath,
      ...env,
    },
    /WORKER_READY/,
  );
  return child;
}
