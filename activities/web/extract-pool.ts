import path from 'node:path';
import type { Piscina } from 'piscina';
import { AppError } from '../../schema/errors';
import type { Extracted } from '../knowledge/extract';
import { lazyModule } from '../lazy-module';
import type { HtmlExtract } from './extract-html';
import type { ExtractReply, ExtractTask } from './extract-thread';
import { ProcessPool, ProcessTaskError } from './process-pool';

/**
 * Pages (HTML) parsed in a pool of worker threads, files (PDF, DOCX) in a pool of child processes, so a heavy one
 * never blocks the process's event loop (every chat, stream and health check of an API process waited behind it:
 * 1 MB of `<` took 15 s, a 179 KB DOCX holding 50 MB of XML 12.5 s) and one that would take too long is stopped
 * (Piscina ends the thread running an aborted task, the process pool kills the process). No heap cap per thread
 * (`resourceLimits`): a thread past it sometimes ended cleanly and sometimes took the whole process down
 * ("Reached heap limit"), which is worse than no cap; a page's memory is bounded by the download limit. A file's is
 * not: a PDF's streams and a DOCX's parts are compressed, and pdf.js inflates a content stream whole (1.5 GB of
 * spaces in a 1.5 MB PDF took 3.4 GB and 14 s), so files are read in processes whose data segment the operating
 * system caps (`prlimit --data`, SVC_EXTRACT_MEMORY_MB): past it an allocation fails or the child dies, and the
 * request gets 413.
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

/** A page or file past its deadline (the thread or process reading it is ended). */
const notReadInTime = (what: string, timeoutMs: number) =>
  new AppError(
    'upstream_error',
    `The ${what} could not be read within ${timeoutMs / 1000} s (it is too large or too deeply nested); it was left unread.`,
  );
const tooManyReads = () =>
  new AppError('service_unavailable', 'Too many pages and files are being read at once; try again shortly.', {
    headers: { 'Retry-After': '2' },
  });

let fileMemoryMb = 2048;
/** The data-segment cap of each file-reading process, in MiB (SVC_EXTRACT_MEMORY_MB; 0: none). */
export function configureFileReading(opts: { memoryMb: number }): void {
  if (opts.memoryMb === fileMemoryMb) return;
  fileMemoryMb = opts.memoryMb;
  filePool = undefined; // the next file starts processes with the new cap; the old ones end when idle
}

/** File-reading processes end after this long without work (they are started again on the next file). */
const FILE_POOL_IDLE_MS = 30_000;
let filePool: ProcessPool<FileReply> | undefined;
type FileReply = ExtractReply<Extracted> | { outOfMemory: true } | { failed: string };

async function runFile(task: Extract<ExtractTask, { kind: 'pdf' | 'docx' }>, what: string): Promise<Extracted> {
  const timeoutMs = EXTRACT_TIMEOUT_MS.file;
  const tooBig = () =>
    new AppError(
      'payload_too_large',
      `The ${what} needs more than the ${fileMemoryMb} MB a file may use while it is read (it expands too far); it was left unread.`,
    );
  filePool ??= new ProcessPool<FileReply>({
    entry: path.join(__dirname, `extract-process${path.extname(__filename)}`),
    memoryMb: fileMemoryMb,
    size: 2,
    maxQueue: MAX_QUEUE,
    idleMs: FILE_POOL_IDLE_MS,
  });
  let reply: FileReply;
  try {
    reply = await filePool.run(task, timeoutMs);
  } catch (err) {
    if (!(err instanceof ProcessTaskError)) throw err;
    if (err.reason === 'timeout') throw notReadInTime(what, timeoutMs);
    if (err.reason === 'queue_full') throw tooManyReads();
    if (err.reason === 'out_of_memory') throw tooBig();
    throw new Error(`Reading the ${what} failed: ${err.message}`, { cause: err });
  }
  if ('outOfMemory' in reply) throw tooBig();
  if ('failed' in reply) throw new Error(`Reading the ${what} failed: ${reply.failed}`);
  if ('error' in reply) throw new AppError(reply.error.code, reply.error.message);
  return reply.ok;
}

async function run<T>(task: ExtractTask, what: string, timeoutMs: number): Promise<T> {
  let reply: ExtractReply<T>;
  try {
    reply = (await pool().run(task, { signal: AbortSignal.timeout(timeoutMs) })) as ExtractReply<T>;
  } catch (err) {
    const e = err as Error;
    if (e.name === 'AbortError') throw notReadInTime(what, timeoutMs);
    if (/queue is at limit/i.test(e.message)) throw tooManyReads();
    throw err;
  }
  if ('error' in reply) throw new AppError(reply.error.code, reply.error.message);
  return reply.ok;
}

/** `extractHtmlPage` in a worker thread. @throws AppError upstream_error (deadline), service_unavailable (queue full) */
export function extractHtmlInThread(html: string, opts: { url?: string; selector?: string }): Promise<HtmlExtract> {
  return run<HtmlExtract>({ kind: 'html', html, ...opts }, 'page', EXTRACT_TIMEOUT_MS.html);
}

/**
 * A PDF's or DOCX's text in a child process.
 * @throws AppError as `extractHtmlInThread`, invalid_request (unreadable), payload_too_large (past the memory cap)
 */
export function extractFileInProcess(kind: 'pdf' | 'docx', bytes: Uint8Array): Promise<Extracted> {
  return runFile({ kind, bytes }, kind === 'pdf' ? 'PDF' : 'DOCX document');
}
