import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
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

type Doc = ReturnType<typeof parseHTML>['document'];

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
  const { document } = parseHTML(withoutInert(html));
  const info = pageMeta(document, html);
  let contentHtml: string | undefined;
  if (opts.selector) {
    contentHtml = document.querySelector(opts.selector)?.outerHTML ?? '';
  } else {
    // Readability changes the document it reads: the metadata above was taken first.
    try {
      const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
        keepClasses: true,
        charThreshold: 200,
      }).parse();
      if (article?.content && (article.textContent ?? '').trim().length >= 80) {
        contentHtml = article.content;
        info.byline ??= article.byline?.trim() || undefined;
        info.siteName ??= article.siteName?.trim() || undefined;
        if (!info.title && article.title) info.title = article.title.trim();
      }
    } catch {
      contentHtml = undefined;
    }
    contentHtml ??= document.querySelector('body')?.innerHTML ?? html;
  }
  const { document: content } = parseHTML(`<!doctype html><html><body>${contentHtml}</body></html>`);
  const body = content.querySelector('body')!;
  const links = collectLinks(body, opts.url);
  stripBoilerplate(body as never, info.title);
  const clean = body.innerHTML;
  const markdown = htmlToMarkdown(clean, opts.url);
  return { ...info, html: clean, markdown, text: markdownToText(markdown), links };
}
