import type { ResearchReport } from '../../schema/research';

export interface DraftCitation {
  id: number;
  source: number | null;
  quote: string;
}

/** Case, whitespace, quote-mark and dash differences do not make a quote unverifiable. */
export function normaliseForQuote(s: string): string {
  return s
    .toLowerCase()
    .replace(/[‘’‚‛′`]/g, "'")
    .replace(/[“”„‟″]/g, '"')
    .replace(/[‐‑‒–—―]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Keeps the citations whose quote occurs in the text of the source they name (a source fetched in
 * this run); the others lose their `[n]` markers in the report and are listed as unverified.
 */
export function verifyCitations(
  markdown: string,
  drafts: DraftCitation[],
  sources: Map<number, { url: string; text: string }>,
): ResearchReport {
  const normalised = new Map([...sources].map(([n, s]) => [n, normaliseForQuote(s.text)]));
  const citations: ResearchReport['citations'] = [];
  const unverified: ResearchReport['unverified'] = [];
  const seen = new Set<number>();
  for (const d of drafts) {
    if (seen.has(d.id)) continue;
    seen.add(d.id);
    const quote = normaliseForQuote(d.quote ?? '');
    const src = d.source === null ? undefined : sources.get(d.source);
    let reason: string | undefined;
    if (!src) reason = 'the cited source was not fetched in this run';
    else if (quote.length < 12) reason = 'the quote is missing or too short to verify';
    else if (!normalised.get(d.source!)!.includes(quote)) reason = 'the quote does not occur in the cited source';
    if (reason) unverified.push({ id: d.id, source: d.source, quote: d.quote ?? '', reason });
    else citations.push({ id: d.id, source: d.source!, url: src!.url, quote: d.quote });
  }
  const ok = new Set(citations.map((c) => c.id));
  const cleaned = markdown
    .replace(/\s?\[(\d+)\]/g, (m, n: string) => (ok.has(Number(n)) ? m : ''))
    .replace(/[ \t]+\n/g, '\n');
  return { markdown: cleaned.trim(), citations, unverified };
}
