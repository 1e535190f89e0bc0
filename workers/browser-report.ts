import { execFile } from 'node:child_process';
import type { Logger } from 'pino';
import type { BrowserHost } from '../activities/browser/host';
import { removeBrowserWorker, reportBrowserWorker } from '../activities/store/browser-workers';
import type { Db } from '../activities/store/db';

/** `chromium --version` without launching a browser (the host launches Chromium on first use only). */
function chromiumVersion(path: string): Promise<string | null> {
  return new Promise((resolve) =>
    execFile(path, ['--version'], { timeout: 10_000 }, (err, out) => resolve(err ? null : out.trim())),
  );
}

/**
 * Reports this browser worker in `browser_workers` (GET /v1/daemons: version, capacity, sessions
 * open) at start and every `everyMs`; `stop` deletes the row, so only killed workers go stale.
 */
export async function startBrowserReport(o: {
  db: Db;
  log: Logger;
  host: BrowserHost;
  workerId: string;
  chromiumPath: string;
  everyMs: number;
  /** The command endpoint and its token (direct commands), when this worker has one. */
  endpoint?: string;
  token?: string;
}): Promise<{ stop(): Promise<void> }> {
  const version = await chromiumVersion(o.chromiumPath);
  const report = () =>
    reportBrowserWorker(o.db, {
      workerId: o.workerId,
      chromiumVersion: version,
      capacity: o.host.capacity,
      sessionsOpen: o.host.sessions.size,
      endpoint: o.endpoint,
      token: o.token,
    }).catch((err: Error) => o.log.warn({ err: err.message }, 'browser worker report failed'));
  await report();
  const timer = setInterval(() => void report(), o.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await removeBrowserWorker(o.db, o.workerId).catch(() => undefined);
    },
  };
}
