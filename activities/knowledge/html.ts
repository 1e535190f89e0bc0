import { extractHtmlPage } from '../web/extract-html';

/**
 * Readable text of an HTML page: the same main-content extraction as
 * POST /v1/capabilities/web-fetch (Readability on linkedom plus generic boilerplate rules),
 * as plain text.
 */
export function extractHtml(html: string, url?: string): { title?: string; text: string } {
  const page = extractHtmlPage(html, { url });
  return { title: page.title, text: page.text.trim() };
}
