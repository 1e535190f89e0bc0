import { Readability } from '@mozilla/readability';
import { convert } from 'html-to-text';
import { parseHTML } from 'linkedom';

/**
 * Readable text of an HTML page: Mozilla Readability on a linkedom DOM (the article, without
 * navigation and boilerplate); pages too short for Readability fall back to all visible text.
 */
export function extractHtml(html: string, url?: string): { title?: string; text: string } {
  const { document } = parseHTML(html);
  const pageTitle = document.querySelector('title')?.textContent?.trim() || undefined;
  let article: { title?: string | null; textContent?: string | null; content?: string | null } | null = null;
  try {
    if (url) (document as unknown as { documentURI?: string }).documentURI ??= url;
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  const fromArticle = article?.content ? htmlToText(article.content) : '';
  const text = fromArticle.trim().length >= 80 ? fromArticle : htmlToText(html);
  return { title: article?.title?.trim() || pageTitle, text: text.trim() };
}

function htmlToText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'h5', options: { uppercase: false } },
      { selector: 'h6', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable' },
    ],
  });
}
