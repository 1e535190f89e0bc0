// Runs in a worker thread of the extraction pool (extract-pool.ts): one page's or file's parsing, off the event loop.
import { readDocx, readPdf, type Extracted } from '../knowledge/extract';
import { AppError } from '../../schema/errors';
import { extractHtmlPage, type HtmlExtract } from './extract-html';

export type ExtractTask =
  { kind: 'html'; html: string; url?: string; selector?: string } | { kind: 'pdf' | 'docx'; bytes: Uint8Array };

/** What a thread sends back: the result, or an AppError's code and sentence (a thrown error loses its class). */
export type ExtractReply<T> = { ok: T } | { error: { code: AppError['code']; message: string } };

export default async function extractInThread(task: ExtractTask): Promise<ExtractReply<HtmlExtract | Extracted>> {
  try {
    if (task.kind === 'html') return { ok: extractHtmlPage(task.html, { url: task.url, selector: task.selector }) };
    return { ok: task.kind === 'pdf' ? await readPdf(task.bytes) : await readDocx(task.bytes) };
  } catch (err) {
    if (err instanceof AppError) return { error: { code: err.code, message: err.message } };
    throw err;
  }
}
