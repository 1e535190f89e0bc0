import path from 'node:path';
import type { Piscina } from 'piscina';
import { AppError } from '../../schema/errors';
import type { Extracted } from '../knowledge/extract';
import { lazyModule } from '../lazy-module';
import type { HtmlExtract } from './extract-html';
import type { ExtractReply, ExtractTask } from './extract-thread';

/**
 * Pages and files (HTML, PDF, DOCX) parsed in a pool of worker threads, so a heavy one never blocks
 * the process's event loop (every chat, stream and health check of an API process waited behind it:
 * 1 MB of `<` took 15 s, a 179 KB DOCX holding 50 MB of XML 12.5 s) and one that would take too long
 * is stopped (Piscina ends the thread running an aborted task). No heap cap per thread
 * (`resourceLimits`): a thread past it sometimes ended cleanly and sometimes took the whole process
 * down ("Reached heap limit"), which is worse than no cap; memory is bounded by the download limits
 * and the DOCX check in `knowledge/extract.ts`.
 */
const EXTRACT_TIMEOUT_MS = { html: 10_000, file: 30_000 } as const;
/** Pages waiting for a thread beyond this are refused (503): each holds its body, up to tens of MB. */
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

async function run<T>(task: ExtractTask, what: string, timeoutMs: number): Promise<T> {
  let reply: ExtractReply<T>;
  try {
    reply = (await pool().run(task, { signal: AbortSignal.timeout(timeoutMs) })) as ExtractReply<T>;
  } catch (err) {
    const e = err as Error;
    if (e.name === 'AbortError')
      throw new AppError(
        'upstream_error',
        `The ${what} could not be read within ${timeoutMs / 1000} s (it is too large or too deeply nested); it was left unread.`,
      );
    if (/queue is at limit/i.test(e.message))
      throw new AppError('service_unavailable', 'Too many pages and files are being read at once; try again shortly.', {
        headers: { 'Retry-After': '2' },
      });
    throw err;
  }
  if ('error' in reply) throw new AppError(reply.error.code, reply.error.message);
  return reply.ok;
}

/** `extractHtmlPage` in a worker thread. @throws AppError upstream_error (deadline), service_unavailable (queue full) */
export function extractHtmlInThread(html: string, opts: { url?: string; selector?: string }): Promise<HtmlExtract> {
  return run<HtmlExtract>({ kind: 'html', html, ...opts }, 'page', EXTRACT_TIMEOUT_MS.html);
}

/** A PDF's or DOCX's text in a worker thread. @throws AppError as `extractHtmlInThread`, invalid_request (unreadable) */
export function extractFileInThread(kind: 'pdf' | 'docx', bytes: Uint8Array): Promise<Extracted> {
  return run<Extracted>({ kind, bytes }, kind === 'pdf' ? 'PDF' : 'DOCX document', EXTRACT_TIMEOUT_MS.file);
}
