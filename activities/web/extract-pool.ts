import path from 'node:path';
import type { Piscina } from 'piscina';
import { AppError } from '../../schema/errors';
import { lazyModule } from '../lazy-module';
import type { HtmlExtract } from './extract-html';
import type { ExtractTask } from './extract-thread';

/**
 * A page's DOM work (parse, Readability, cleanup, Turndown) in a pool of worker threads, so a heavy
 * page never blocks the process's event loop (every chat, stream and health check of an API process
 * waited behind it: 1 MB of `<` took 15 s, a 10 MB page ~10 s) and a page that would take longer
 * than EXTRACT_TIMEOUT_MS is stopped (Piscina ends the thread running an aborted task).
 */
export const EXTRACT_TIMEOUT_MS = 10_000;
/** Pages waiting for a thread beyond this are refused (503): each holds its body, up to 10 MB. */
const MAX_QUEUE = 64;

const pool = lazyModule((): Piscina => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first page (see lazyModule)
  const { Piscina: Pool } = require('piscina') as typeof import('piscina');
  const entry = path.join(__dirname, `extract-thread${path.extname(__filename)}`);
  const built = entry.endsWith('.js');
  return new Pool({
    filename: built ? entry : path.join(__dirname, '../../bin/ts-thread.js'),
    workerData: { entry },
    minThreads: 0,
    maxThreads: 2,
    idleTimeout: 30_000,
    maxQueue: MAX_QUEUE,
  });
});

/** `extractHtmlPage` in a worker thread, within EXTRACT_TIMEOUT_MS. @throws AppError upstream_error, service_unavailable */
export async function extractHtmlInThread(html: string, opts: Omit<ExtractTask, 'html'>): Promise<HtmlExtract> {
  try {
    return (await pool().run({ html, ...opts } satisfies ExtractTask, {
      signal: AbortSignal.timeout(EXTRACT_TIMEOUT_MS),
    })) as HtmlExtract;
  } catch (err) {
    const e = err as Error;
    if (e.name === 'AbortError')
      throw new AppError(
        'upstream_error',
        `The page could not be read within ${EXTRACT_TIMEOUT_MS / 1000} s (its markup is too large or too deeply nested); it was left unread.`,
      );
    if (/queue is at limit/i.test(e.message))
      throw new AppError('service_unavailable', 'Too many pages are being read at once; try again shortly.', {
        headers: { 'Retry-After': '2' },
      });
    throw err;
  }
}
