// Runs in a worker thread of the extraction pool (extract-pool.ts): one page's DOM work, off the event loop.
import { extractHtmlPage, type HtmlExtract } from './extract-html';

export interface ExtractTask {
  html: string;
  url?: string;
  selector?: string;
}

export default function extractInThread(task: ExtractTask): HtmlExtract {
  return extractHtmlPage(task.html, { url: task.url, selector: task.selector });
}
