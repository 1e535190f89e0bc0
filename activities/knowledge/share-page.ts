import { convert } from 'html-to-text';
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml } from '../../schema/snippet';

/** What the share page allows: readable document markup; no scripts, handlers, forms, frames or styles. */
const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'p',
    'br',
    'hr',
    'blockquote',
    'pre',
    'code',
    'kbd',
    'samp',
    'em',
    'strong',
    'b',
    'i',
    'u',
    's',
    'del',
    'ins',
    'mark',
    'sub',
    'sup',
    'small',
    'abbr',
    'cite',
    'q',
    'a',
    'ul',
    'ol',
    'li',
    'dl',
    'dt',
    'dd',
    'table',
    'thead',
    'tbody',
    'tfoot',
    'tr',
    'th',
    'td',
    'caption',
    'img',
    'figure',
    'figcaption',
    'details',
    'summary',
    'span',
    'div',
    'section',
    'article',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'name', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    code: ['class'],
    th: ['align', 'colspan', 'rowspan'],
    td: ['align', 'colspan', 'rowspan'],
    ol: ['start'],
    abbr: ['title'],
  },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https', 'data'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow' }) },
};

/** The share's content as sanitised HTML (markdown is rendered first, then sanitised the same way). */
export function renderShareContent(content: string, format: 'markdown' | 'html'): string {
  const raw = format === 'markdown' ? (marked.parse(content, { async: false, gfm: true }) as string) : content;
  return sanitizeHtml(raw, SANITIZE);
}

/** First ~200 characters of the page's text, for description and social cards. */
export function describe(html: string): string {
  const headings = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
    selector,
    options: { uppercase: false },
  }));
  const text = convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
      ...headings,
    ],
  })
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > 200 ? `${text.slice(0, 197).trimEnd()}…` : text;
}

/** Headers of every share page: a strict CSP forbids scripts even if sanitising ever missed one, and images
 * load only from our origin or data: URLs, so a share cannot make its viewers' browsers call an outside server. */
export const SHARE_PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const STYLE = `
  :root { color-scheme: light dark; --fg: #1d1d1f; --muted: #6e6e73; --bg: #fbfbfd; --rule: #d2d2d7; --code: #f2f2f5; }
  @media (prefers-color-scheme: dark) { :root { --fg: #f5f5f7; --muted: #a1a1a6; --bg: #161617; --rule: #3a3a3c; --code: #222224; } }
  * { box-sizing: border-box; }
  body { margin: 0; background: var(--bg); color: var(--fg); font: 17px/1.65 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
  main { max-width: 44rem; margin: 0 auto; padding: 3rem 1.25rem 4rem; }
  header { border-bottom: 1px solid var(--rule); margin-bottom: 2rem; padding-bottom: 1rem; }
  header h1 { font-size: 2rem; line-height: 1.2; margin: 0 0 .5rem; }
  .meta { color: var(--muted); font-size: .9rem; margin: 0; }
  article img { max-width: 100%; height: auto; }
  pre { background: var(--code); padding: 1rem; overflow-x: auto; border-radius: 6px; font-size: .9rem; }
  code { background: var(--code); padding: .1em .3em; border-radius: 4px; font-size: .92em; }
  pre code { background: none; padding: 0; }
  blockquote { margin: 1rem 0; padding-left: 1rem; border-left: 3px solid var(--rule); color: var(--muted); }
  table { border-collapse: collapse; width: 100%; } th, td { border: 1px solid var(--rule); padding: .4rem .6rem; text-align: left; }
  a { color: #0066cc; }
  footer { margin-top: 3rem; color: var(--muted); font-size: .8rem; }`;

/** The complete public page. `html` must already be sanitised; title, description and url are escaped here. */
export function sharePage(p: {
  title: string;
  html: string;
  url?: string;
  createdAt?: string;
  status?: 'found' | 'missing';
}): string {
  const title = escapeHtml(p.title);
  const description = escapeHtml(
    p.status === 'missing' ? 'This shared page does not exist or was removed.' : describe(p.html),
  );
  const date = p.createdAt ? new Date(p.createdAt).toISOString().slice(0, 10) : '';
  // Content that opens with the title as its own heading would show it twice.
  const lead = `<h1>${title}</h1>`;
  const body = p.html.trimStart().startsWith(lead) ? p.html.trimStart().slice(lead.length) : p.html;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<meta name="description" content="${description}">
<meta name="robots" content="noindex">
<meta property="og:type" content="article">
<meta property="og:site_name" content="svc">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
${p.url ? `<meta property="og:url" content="${escapeHtml(p.url)}">\n<link rel="canonical" href="${escapeHtml(p.url)}">` : ''}
<meta name="twitter:card" content="summary">
<meta name="twitter:title" content="${title}">
<meta name="twitter:description" content="${description}">
<style>${STYLE}</style>
</head>
<body>
<main>
<article>
<header><h1>${title}</h1>${date ? `<p class="meta">Shared on <time datetime="${date}">${date}</time></p>` : ''}</header>
<div class="content">
${body}
</div>
</article>
<footer>Shared with svc.</footer>
</main>
</body>
</html>
`;
}
