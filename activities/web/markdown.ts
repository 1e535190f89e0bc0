import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';

let service: TurndownService | undefined;

/** One configured converter: ATX headings, fenced code, `-` lists, GFM tables and strikethrough. */
function turndown(): TurndownService {
  if (service) return service;
  service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  service.use(gfm);
  service.remove(['script', 'style', 'noscript', 'template']);
  return service;
}

/**
 * HTML (a string, or an element of an already parsed document, which saves a second parse) to
 * Markdown; relative links and images are made absolute against `base`.
 */
export function htmlToMarkdown(html: string | { nodeType: number }, base?: string): string {
  let md = turndown().turndown(html as string | TurndownService.Node);
  if (base) {
    md = md.replace(/(!?\[[^\]]*\]\()([^)\s]+)/g, (m, head: string, href: string) => {
      try {
        return head + new URL(href, base).toString();
      } catch {
        return m;
      }
    });
  }
  // Turndown pads list markers to four columns ("-   item"); one space is the common form.
  return md
    .replace(/^(\s*)(-|\d+\.) {2,}(?=\S)/gm, '$1$2 ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Plain text of Markdown: markup, link targets and escapes removed, blocks kept apart by blank lines. */
export function markdownToText(md: string): string {
  return md
    .replace(/^```[^\n]*$/gm, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/^\s*>\s?/gm, '')
    .replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm, '')
    .replace(/\s*\|\s*/g, (m) => (m.includes('\n') ? m.replace(/\|/g, '') : ' '))
    .replace(/(\*\*|__|~~)(.+?)\1/g, '$2')
    .replace(/(^|\W)[*_](\S[^*_\n]*?)[*_](?=\W|$)/g, '$1$2')
    .replace(/\\([\\`*_{}[\]()#+\-.!>|~])/g, '$1')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
