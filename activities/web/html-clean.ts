// Generic boilerplate removal applied to the article Readability found (and to whole pages when it
// finds none). The rules are about kinds of page furniture (captions, bylines, datelines, share and
// newsletter prompts, link lists, "related" tails), never about particular sites.

type El = {
  tagName: string;
  className?: string;
  id?: string;
  textContent: string | null;
  children: ArrayLike<El>;
  parentNode: El | null;
  nextElementSibling: El | null;
  querySelectorAll(sel: string): ArrayLike<El>;
  remove(): void;
  getAttribute(name: string): string | null;
};

/** Elements that are never article text. */
const DROP_TAGS =
  'script,style,noscript,template,iframe,svg,canvas,video,audio,picture,img,figure,figcaption,button,form,input,select,textarea,nav,aside,footer,header,dialog,menu';

/** Class or id tokens of page furniture. Matched per token (after splitting on -, _ and spaces). */
const FURNITURE = new Set([
  'caption',
  'credit',
  'credits',
  'byline',
  'dateline',
  'share',
  'sharing',
  'social',
  'related',
  'newsletter',
  'subscribe',
  'subscription',
  'promo',
  'advert',
  'advertisement',
  'ad',
  'ads',
  'sponsor',
  'sponsored',
  'cookie',
  'cookies',
  'comment',
  'comments',
  'breadcrumb',
  'breadcrumbs',
  'tags',
  'tag',
  'author',
  'timestamp',
  'published',
  'signup',
  'recirc',
  'toolbar',
  'print',
  'skip',
  'disclaimer',
  'disclosure',
  'popular',
  'trending',
  'recommended',
  'outbrain',
  'taboola',
  'widget',
  'modal',
  'overlay',
  'banner',
  'meta',
  'metadata',
  'hidden',
  'sr',
  'visually',
  'screenreader',
  'pagination',
  'pager',
  'rating',
]);

const CTA =
  /^(skip to|advertisement|advertising|share (this|on)|subscribe|sign up|sign in|log in|follow (us|me|on)|posted|published|updated|last updated|by\s|image:|photo:|image copyright|\(image|\(photo|photograph:|credit|copyright|©|all rights reserved|related|read more|read next|see also|you may also like|you might also like|more (great|stories|from|on)|popular|trending|recommended|loading|this (website|site) uses cookies|click here|listen|watch:|also on|like this story|filed under|tell us what|get (breaking|the latest)|download|tempo de leitura|reading time|\d+ min(ute)?s? read|advert$|comments?$|don'?t miss|this (slideshow|video|content) requires javascript|atenção: comentários|\[\w+[^\]]*\])/i;
/** A caption line: ends with an "(Image: …)" / "(Photo: …)" credit. */
const CAPTION = /\((image|photo|picture|foto|credit|source)s?( credit)?\s*:[^)]*\)\s*$/i;
const TAIL =
  /^(related( (posts?|stories|articles|coverage|content|reading))?|you may also like|you might also like|more (great|stories|from|on|like this)|popular( this week)?|recommended( for you)?|trending|further reading|latest (news|stories)|most (read|popular))\b[:.!]?$/i;
const MONTH =
  /\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?|mon(day)?|tue(sday)?|wed(nesday)?|thu(rsday)?|fri(day)?|sat(urday)?|sun(day)?)\b/gi;

function tokens(el: El): string[] {
  const raw = `${typeof el.className === 'string' ? el.className : ''} ${el.id ?? ''}`.toLowerCase();
  return raw ? raw.split(/[\s_-]+/).filter(Boolean) : [];
}

function words(text: string): number {
  return text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
}

function clean(text: string | null): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

/** A short line that is only a date/time (datelines, "Updated 6:55 AM"). */
function dateOnly(text: string): boolean {
  if (
    words(text) > 14 ||
    !(new RegExp(MONTH.source, 'i').test(text) || /\d{1,2}:\d{2}|\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}/.test(text))
  )
    return false;
  const rest = text
    .replace(MONTH, ' ')
    .replace(/\b(am|pm|gmt|utc|est|edt|pst|pdt|cet|ist|et|pt|at|on|of|de|às|posted|updated|published)\b/gi, ' ')
    .replace(/[\d:,./|;()\-–—]+/g, ' ');
  return words(rest) === 0 && /\d/.test(text);
}

function linkDensity(el: El): number {
  const total = clean(el.textContent).length;
  if (!total) return 0;
  let linked = 0;
  const links = el.querySelectorAll('a');
  for (let i = 0; i < links.length; i++) linked += clean(links[i].textContent).length;
  return linked / total;
}

/** Removes `el` and everything after it inside `root` (a "Related stories" tail). */
function cutFrom(el: El, root: El): void {
  let node: El | null = el;
  while (node && node !== root) {
    let next = node.nextElementSibling;
    while (next) {
      const after: El | null = next.nextElementSibling;
      next.remove();
      next = after;
    }
    const parent: El | null = node.parentNode;
    if (node === el) node.remove();
    node = parent;
  }
}

const LEAF_BLOCKS = 'p,li,h1,h2,h3,h4,h5,h6,dd,dt,blockquote,pre,div,section';
/** Inline elements are judged with their block, never alone (a link or ticker inside a sentence stays). */
const INLINE = /^(A|SPAN|STRONG|EM|B|I|U|SMALL|SUP|SUB|ABBR|CITE|CODE|MARK|TIME|Q|S)$/;
const BLOCK_CHILD = /^(P|DIV|LI|UL|OL|TABLE|BLOCKQUOTE|PRE|SECTION|ARTICLE|H[1-6]|DL|TR|TBODY)$/;

/**
 * Strips page furniture from `root` in place: non-text elements, furniture by class/id, link
 * lists, short call-to-action and dateline lines, and everything from a "Related"/"More stories"
 * heading on. `title` (the page title) is dropped where it is repeated as a heading.
 */
export function stripBoilerplate(root: El, title?: string): void {
  const all = root.querySelectorAll(DROP_TAGS);
  for (let i = all.length - 1; i >= 0; i--) all[i].remove();
  const styled = root.querySelectorAll('[class],[id],[hidden],[aria-hidden="true"]');
  for (let i = styled.length - 1; i >= 0; i--) {
    const el = styled[i];
    if (el.getAttribute('hidden') !== null || el.getAttribute('aria-hidden') === 'true') {
      el.remove();
      continue;
    }
    if (INLINE.test(el.tagName)) continue;
    // Containers holding much text are kept whatever their class says (some sites mark the body "post-meta ...").
    if (tokens(el).some((t) => FURNITURE.has(t)) && words(clean(el.textContent)) < 80) el.remove();
  }
  const normTitle = title ? clean(title).toLowerCase() : '';
  const blocks = root.querySelectorAll(LEAF_BLOCKS);
  const list: El[] = [];
  for (let i = 0; i < blocks.length; i++) list.push(blocks[i]);
  for (const el of list) {
    if (!el.parentNode) continue; // removed with an ancestor
    const children = el.children;
    let hasBlock = false;
    for (let i = 0; i < children.length; i++) if (BLOCK_CHILD.test(children[i].tagName)) hasBlock = true;
    const text = clean(el.textContent);
    const n = words(text);
    if (/^H[1-6]$/.test(el.tagName) || (n <= 6 && /^(P|DIV|SPAN|STRONG)$/.test(el.tagName))) {
      if (TAIL.test(text)) {
        cutFrom(el, root);
        continue;
      }
    }
    if (hasBlock) continue;
    if (!n) {
      el.remove();
      continue;
    }
    if (/^H[1-6]$/.test(el.tagName) && normTitle && text.toLowerCase() === normTitle) el.remove();
    else if (n < 25 && CTA.test(text)) el.remove();
    else if (n < 40 && CAPTION.test(text)) el.remove();
    else if (dateOnly(text)) el.remove();
    else if (n < 40 && linkDensity(el) > 0.6) el.remove();
  }
  // Lists left as mostly links (recirculation modules) go as a whole.
  const lists = root.querySelectorAll('ul,ol');
  for (let i = lists.length - 1; i >= 0; i--) if (linkDensity(lists[i]) > 0.7) lists[i].remove();
}
