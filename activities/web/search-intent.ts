import type { SearchIntent } from '../../schema/web';

// A deterministic intent classifier: ordered keyword rules, first match wins (documented in
// docs/decisions.md). No model call, so the same query always gets the same engines.
const RULES: Array<[SearchIntent, RegExp]> = [
  [
    'code',
    /\b(error|exception|stack ?trace|typeerror|segfault|npm|pip|cargo|maven|gradle|github|stackoverflow|api|sdk|function|regex|compile|syntax|python|javascript|typescript|golang|rust|java|kotlin|c\+\+|sql|docker|kubernetes|bash|linux)\b|\w+\(\)|::|=>/i,
  ],
  [
    'academic',
    /\b(paper|papers|study|studies|arxiv|doi|journal|peer[- ]reviewed|meta-analysis|citation|thesis|dissertation|preprint|pubmed|research on|survey of)\b/i,
  ],
  [
    'news',
    /\b(news|latest|today|yesterday|this week|breaking|announced|election|earnings|headlines?|update on|live)\b|\b20\d\d\b.*\b(results|winner)\b/i,
  ],
  [
    'shopping',
    /\b(buy|price|prices|cheap|cheapest|deal|deals|discount|coupon|review|reviews|best .* (for|under)|vs\.?|versus|order|shipping)\b|\$\d/i,
  ],
  [
    'reference',
    /^(what|who|when|where|why|how) (is|are|was|were|did|does|do)\b|\b(definition|define|meaning of|wiki|wikipedia|history of|population of|capital of)\b/i,
  ],
];

export function classifyIntent(query: string): SearchIntent {
  for (const [intent, re] of RULES) if (re.test(query)) return intent;
  return 'general';
}

/** SearXNG category per intent (its standard category names). */
export const SEARXNG_CATEGORY: Record<SearchIntent, string> = {
  news: 'news',
  code: 'it',
  academic: 'science',
  reference: 'general',
  shopping: 'general',
  general: 'general',
};
