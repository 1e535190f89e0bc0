import { Readability } from '@mozilla/readability';
import type { parseHTML as ParseHtml } from 'linkedom';
import { AppError } from '../../schema/errors';
import { lazyModule } from '../lazy-module';
import { stripBoilerplate } from './html-clean';
import { htmlToMarkdown, markdownToText } from './markdown';

export interface PageMeta {
  title?: string;
  byline?: string;
  siteName?: string;
  publishedAt?: string;
  lang?: string;
}

export interface HtmlExtract extends PageMeta {
  /** The cleaned main-content HTML. */
  html: string;
  markdown: string;
  text: string;
  links: Array<{ text: string; url: string }>;
}

type Doc = ReturnType<typeof ParseHtml>['document'];
type El = NonNullable<ReturnType<Doc['querySelector']>>;

function meta(doc: Doc, ...names: string[]): string | undefined {
  for (const n of names) {
    const el = doc.querySelector(`meta[property="${n}"],meta[name="${n}"],meta[itemprop="${n}"]`);
    const v = el?.getAttribute('content')?.trim();
    if (v) return v;
  }
  return undefined;
}

function isoDate(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const t = Date.parse(raw);
  return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
}

/** Publication date from JSON-LD `datePublished` (read from the raw page), article meta tags, or the first `<time datetime>`. */
function publishedAt(doc: Doc, raw: string): string | undefined {
  const ld = /"datePublished"\s*:\s*"([^"]+)"/.exec(raw);
  if (ld && isoDate(ld[1])) return isoDate(ld[1]);
  return (
    isoDate(meta(doc, 'article:published_time', 'datePublished', 'date', 'pubdate', 'DC.date.issued')) ??
    isoDate(doc.querySelector('time[datetime]')?.getAttribute('datetime') ?? undefined)
  );
}

function pageMeta(doc: Doc, raw: string): PageMeta {
  return {
    title: meta(doc, 'og:title', 'twitter:title') ?? (doc.querySelector('title')?.textContent?.trim() || undefined),
    byline: meta(doc, 'author', 'article:author', 'byl'),
    siteName: meta(doc, 'og:site_name', 'application-name'),
    publishedAt: publishedAt(doc, raw),
    lang: doc.documentElement?.getAttribute('lang')?.trim() || meta(doc, 'og:locale', 'language'),
  };
}

function collectLinks(
  root: {
    querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null; textContent: string | null }>;
  },
  base?: string,
) {
  const out: Array<{ text: string; url: string }> = [];
  const seen = new Set<string>();
  const anchors = root.querySelectorAll('a[href]');
  for (let i = 0; i < anchors.length && out.length < 500; i++) {
    const href = anchors[i].getAttribute('href') ?? '';
    let url: string;
    try {
      url = new URL(href, base).toString();
    } catch {
      continue;
    }
    if (!/^https?:/.test(url) || seen.has(url)) continue;
    seen.add(url);
    out.push({ text: (anchors[i].textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 200), url });
  }
  return out;
}

/**
 * linkedom's `parseHTML`, loaded on the first page (2.4 MB of heap), with the table patch below applied once.
 * Turndown's GFM table rule reads `table.rows[0]`, which linkedom does not implement; Turndown is
 * given linkedom elements directly (no second parse), so the table prototype gets a spec-ordered
 * `rows` (thead rows, then body rows and direct rows in order, then tfoot rows).
 */
const linkedom = lazyModule(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (see lazyModule)
  const { parseHTML } = require('linkedom') as typeof import('linkedom');
  const table = parseHTML('<table></table>').document.querySelector('table');
  const proto = table && (Object.getPrototypeOf(table) as object);
  if (proto && !('rows' in proto)) {
    Object.defineProperty(proto, 'rows', {
      get(this: El) {
        const head: El[] = [];
        const body: El[] = [];
        const foot: El[] = [];
        for (const child of Array.from(this.children as ArrayLike<El>)) {
          const tag = child.tagName;
          if (tag === 'TR') body.push(child);
          else if (tag === 'THEAD' || tag === 'TBODY' || tag === 'TFOOT') {
            const rows = Array.from(child.children as ArrayLike<El>).filter((r) => r.tagName === 'TR');
            (tag === 'THEAD' ? head : tag === 'TFOOT' ? foot : body).push(...rows);
          }
        }
        return [...head, ...body, ...foot];
      },
    });
  }
  return parseHTML;
});

const INERT_START = /<!--|<(script|style|svg|template|noscript)\b/gi;

/**
 * The page without scripts, styles, inline SVG, comments and templates: never text, often most of
 * the bytes, and every element removed here is one the DOM parser and Readability do not walk.
 * One pass with `indexOf` for each end: a lazy regex from every start to its end rescans the rest
 * of the page for each start that has no end (400 KB of `<!--` took 29 s). An element or comment
 * left open runs to the end of the page, as an HTML parser reads it.
 */
function withoutInert(html: string): string {
  const lower = html.toLowerCase();
  const kept: string[] = [];
  let from = 0;
  INERT_START.lastIndex = 0;
  for (let m = INERT_START.exec(html); m; m = INERT_START.exec(html)) {
    kept.push(html.slice(from, m.index));
    const close = m[1] ? `</${m[1].toLowerCase()}` : '-->';
    const end = lower.indexOf(close, INERT_START.lastIndex);
    if (end < 0) return kept.join('');
    from = m[1] ? lower.indexOf('>', end) + 1 || html.length : end + 3;
    INERT_START.lastIndex = from;
  }
  kept.push(html.slice(from));
  return kept.join('');
}

/** The text of the page's first `<title>` (found with `indexOf`, for the reason `withoutInert` gives). */
function titleOf(html: string, lower: string): string {
  const open = lower.indexOf('<title');
  const start = open < 0 ? -1 : lower.indexOf('>', open) + 1;
  const end = start > 0 ? lower.indexOf('</title', start) : -1;
  return end < 0 ? '' : html.slice(start, end);
}

/**
 * Nesting deeper than this is read as flat text. Real pages nest 17 elements deep at the median and
 * 51 at most in our corpus (`../shared/data/article-extraction`); Blink's parser stops nesting at
 * 512. Past a few hundred levels the DOM work grows much faster than the page: 1,000 nested `div`s
 * (6 KB) took Readability 20 s and 2,000 took 164 s, the cleanup rules and linkedom's parse grow with
 * the square of the depth (91 s and 3.5 s at 100,000), and Turndown's recursion overflows the stack
 * from ~5,000 levels, so the page came back empty after minutes of a blocked process.
 */
const MAX_NESTING = 256;

const VOID_TAGS = new Set('area base br col embed hr img input link meta param source track wbr'.split(' '));
/** Elements whose end tag may be left out: the parser closes them itself, so they do not nest without bound. */
const OPTIONAL_END_TAGS = new Set(
  'html head body p li dt dd rb rt rtc rp optgroup option colgroup caption thead tbody tfoot tr td th'.split(' '),
);
const TAG = /<(\/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*?(\/?)>/g;

/** How deep the page's elements nest, counted from its tags in one pass, before any DOM is built. */
function nestingDepth(html: string): number {
  let depth = 0;
  let max = 0;
  for (const [, close, name, selfClosing] of html.matchAll(TAG)) {
    const tag = name.toLowerCase();
    if (VOID_TAGS.has(tag) || OPTIONAL_END_TAGS.has(tag) || selfClosing) continue;
    if (close) depth = Math.max(0, depth - 1);
    else if (++depth > max) max = depth;
  }
  return max;
}

const BLOCK_TAG =
  /<\/?(?:address|article|aside|blockquote|br|dd|div|dl|dt|figcaption|figure|footer|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|td|th|tr|ul)\b[^<>]*>/gi;

/** A page nested past MAX_NESTING as a flat one: its title, then one paragraph per block of text. */
function flattened(html: string): string {
  const lower = html.toLowerCase();
  const bodyAt = lower.indexOf('<body');
  const text = html
    .slice(Math.max(0, bodyAt))
    .replace(BLOCK_TAG, '\n\n')
    .replace(/<[^<>]*>/g, ' ');
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  return `<html><head><title>${titleOf(html, lower)}</title></head><body>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</body></html>`;
}

/** @throws AppError invalid_request naming `body.selector` when the selector does not parse (checked before any download). */
export function checkSelector(selector: string): void {
  try {
    linkedom()('<p></p>').document.querySelector(selector);
  } catch (err) {
    const message = `not a CSS selector this service reads (${String((err as Error).message).slice(0, 120)})`;
    throw new AppError('invalid_request', `selector: ${message}`, { details: [{ path: 'body.selector', message }] });
  }
}

/**
 * Main content of an HTML page as Markdown and text, with page metadata. Readability (on
 * linkedom) finds the article; generic furniture rules then clean it (`html-clean.ts`). With
 * `selector` the first matching element is the content instead. Pages Readability cannot read
 * fall back to the whole cleaned body.
 */
export function extractHtmlPage(html: string, opts: { url?: string; selector?: string } = {}): HtmlExtract {
  const source = withoutInert(html);
  const { document } = linkedom()(nestingDepth(source) > MAX_NESTING ? flattened(source) : source);
  const info = pageMeta(document, html);
  // One parse: Readability hands back its article element (serializer: el => el), and the cleanup
  // rules, the link list and Turndown all work on that element; no serialise-and-reparse between stages.
  let content: El | null | undefined;
  // The selector's match is kept whole; Readability's article (its default serializer) and the body by their inner HTML.
  const outer = !!opts.selector;
  if (opts.selector) {
    content = document.querySelector(opts.selector);
  } else {
    // Readability changes the document it reads: the metadata above was taken first.
    try {
      const article = new Readability<El>(document as unknown as ConstructorParameters<typeof Readability>[0], {
        keepClasses: true,
        charThreshold: 200,
        serializer: (el) => el as unknown as El,
      }).parse();
      if (article?.content && (article.textContent ?? '').trim().length >= 80) {
        content = article.content;
        info.byline ??= article.byline?.trim() || undefined;
        info.siteName ??= article.siteName?.trim() || undefined;
        if (!info.title && article.title) info.title = article.title.trim();
      }
    } catch {
      content = undefined;
    }
    content ??= document.querySelector('body');
  }
  if (!content) return { ...info, html: '', markdown: '', text: '', links: [] };
  const links = collectLinks(content, opts.url);
  stripBoilerplate(content as never, info.title);
  const clean = outer ? content.outerHTML : content.innerHTML;
  const markdown = htmlToMarkdown(content, opts.url);
  return { ...info, html: clean, markdown, text: markdownToText(markdown), links };
}
