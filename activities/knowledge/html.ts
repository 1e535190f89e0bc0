import { extractHtmlInThread } from '../web/extract-pool';

/**
 * Readable text of an HTML page: the same main-content extraction as
 * POST /v1/capabilities/web-fetch (Readability on linkedom plus generic boilerplate rules),
 * as plain text, in the extraction pool's worker threads.
 */
export async function extractHtml(html: string, url?: string): Promise<{ title?: string; text: string }> {
  const page = await extractHtmlInThread(html, { url });
  return { title: page.title, text: page.text.trim() };
}
