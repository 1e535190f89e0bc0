import type { ChildProcess } from 'node:child_process';
import { spawnTsChild } from '../helpers/child-worker';
import { testEnv } from '../helpers/harness';
import type { BrowserFixture } from './browser-harness';

/** A browser worker in a child process (browser-worker-child.ts) on the fixture's queue, for SIGKILL tests. */
export async function startChild(f: BrowserFixture): Promise<{ child: ChildProcess; workerId: string }> {
  const { child, match } = await spawnTsChild(
    'test/browser/browser-worker-child.ts',
    {
      DATABASE_URL: f.h.dbUrl,
      TEMPORAL_ADDRESS: testEnv().temporalAddress,
      TEMPORAL_TASK_QUEUE: f.h.taskQueue,
      SVC_BROWSER_ALLOW_HOSTS: f.pages.host,
    },
    /BROWSER_WORKER_READY (\S+)/,
  );
  return { child, workerId: match[1] };
}
