import { Readability } from '@mozilla/readability';
import type { parseHTML as ParseHtml } from 'linkedom';
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

/**
 * The page without scripts, styles, inline SVG, comments and templates: never text, often most of
 * the bytes, and every element removed here is one the DOM parser and Readability do not walk.
 */
function withoutInert(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|svg|template|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '');
}

/**
 * Main content of an HTML page as Markdown and text, with page metadata. Readability (on
 * linkedom) finds the article; generic furniture rules then clean it (`html-clean.ts`). With
 * `selector` the first matching element is the content instead. Pages Readability cannot read
 * fall back to the whole cleaned body.
 */
export function extractHtmlPage(html: string, opts: { url?: string; selector?: string } = {}): HtmlExtract {
  const { document } = linkedom()(withoutInert(html));
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
