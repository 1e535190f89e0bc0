import { z } from 'zod';

const HttpUrl = z
  .string()
  .min(1)
  .max(4096)
  .describe('An http(s) URL; private, loopback and metadata addresses are refused.');

export const WebFetchBody = z
  .object({
    url: HttpUrl,
    format: z
      .enum(['markdown', 'text', 'html'])
      .default('markdown')
      .describe('Which representation `max_tokens` is measured on; `html` also returns the cleaned main-content HTML.'),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        'Cut the content at the last whole block (paragraph, list, table, code block) within this many tokens.',
      ),
    selector: z
      .string()
      .min(1)
      .max(300)
      .optional()
      .describe('CSS selector of the content element (instead of automatic main-content extraction).'),
    include_links: z.boolean().default(false).describe('Also return the links found in the page.'),
    cache: z.boolean().default(true).describe('false: bypass the per-URL cache (the fresh result still refreshes it).'),
  })
  .meta({ id: 'WebFetchRequest' });
export type WebFetchBody = z.infer<typeof WebFetchBody>;

export const WebPage = z
  .object({
    url: z.string(),
    final_url: z.string().describe('The URL after redirects.'),
    status: z.number().int().describe('HTTP status of the final answer (200, or 304 when revalidated).'),
    content_type: z
      .string()
      .describe(
        'text/html, application/pdf, application/json, text/plain or text/markdown (detected from the bytes and headers).',
      ),
    charset: z.string().nullable(),
    title: z.string().nullable(),
    byline: z.string().nullable(),
    site_name: z.string().nullable(),
    published_at: z.string().nullable(),
    lang: z.string().nullable(),
    markdown: z.string(),
    text: z.string(),
    html: z.string().optional().describe('Cleaned main-content HTML (format html only).'),
    links: z.array(z.object({ text: z.string(), url: z.string() })).optional(),
    token_estimate: z.number().int().describe('Tokens of the returned content in the requested format.'),
    truncated: z.boolean().describe('True when max_tokens (or the byte cap) cut the content.'),
    cached: z.boolean().describe('True when served from the cache (fresh, or revalidated with 304).'),
    fetched_at: z.string().describe('When the page was last downloaded.'),
  })
  .meta({ id: 'WebPage' });
export type WebPage = z.infer<typeof WebPage>;

export const SEARCH_INTENTS = ['news', 'code', 'academic', 'reference', 'shopping', 'general'] as const;
export type SearchIntent = (typeof SEARCH_INTENTS)[number];

export const Domain = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9.-]+$/i, 'must be a domain name');

export const WebSearchBody = z
  .object({
    query: z.string().trim().min(1).max(1000),
    max_results: z.number().int().min(1).max(50).default(10),
    intent: z.enum(SEARCH_INTENTS).optional().describe('Overrides the classifier.'),
    time_range: z.enum(['day', 'week', 'month', 'year']).optional(),
    include_domains: z.array(Domain).max(20).optional(),
    exclude_domains: z.array(Domain).max(20).optional(),
  })
  .meta({ id: 'WebSearchRequest' });
export type WebSearchBody = z.infer<typeof WebSearchBody>;

export const SearchResult = z.object({
  title: z.string(),
  url: z.string(),
  snippet: z.string(),
  engines: z.array(z.string()),
  score: z.number(),
  published_at: z.string().optional(),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const EngineStatus = z.object({
  name: z.string(),
  status: z.enum(['ok', 'error', 'timeout', 'skipped']),
  latency_ms: z.number().int(),
  results: z.number().int().optional(),
  error: z.string().optional(),
});
export type EngineStatus = z.infer<typeof EngineStatus>;

export const WebSearchResponse = z
  .object({
    query: z.string(),
    intent: z.enum(SEARCH_INTENTS),
    results: z.array(SearchResult),
    engines: z.array(EngineStatus),
    partial: z.boolean().describe('True when an engine failed or timed out.'),
  })
  .meta({ id: 'WebSearchResponse' });
export type WebSearchResponse = z.infer<typeof WebSearchResponse>;

export const RepoReportBody = z
  .object({
    repo: z
      .string()
      .trim()
      .min(1)
      .max(2048)
      .describe('A local path inside SVC_REPO_ROOTS, or an http(s) git URL (shallow-cloned through the fetch guard).'),
    ref: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[\w./-]+$/, 'must be a branch, tag or commit name')
      .refine((r) => !r.startsWith('-') && !r.includes('..'), 'must be a branch, tag or commit name')
      .optional(),
    summary: z
      .boolean()
      .default(false)
      .describe(
        'Add a model-written summary (lane `mid`, at most 600 tokens) built from this report only: README excerpt, layout, manifests, activity; secret values never reach the model.',
      ),
  })
  .meta({ id: 'RepoReportRequest' });
export type RepoReportBody = z.infer<typeof RepoReportBody>;

const Dependency = z.object({ name: z.string(), version: z.string().optional(), scope: z.string().optional() });

export const RepoReport = z
  .object({
    repo: z.string(),
    ref: z.string().nullable(),
    files: z.number().int(),
    bytes: z.number().int(),
    languages: z.array(z.object({ language: z.string(), files: z.number().int(), lines: z.number().int() })),
    total_lines: z.number().int(),
    tree: z.string().describe('Depth-limited listing (2 levels, capped).'),
    manifests: z.array(
      z.object({
        path: z.string(),
        ecosystem: z.enum(['npm', 'go', 'python', 'rust', 'maven']),
        name: z.string().optional(),
        dependencies: z.array(Dependency),
      }),
    ),
    tests: z.object({ directories: z.array(z.string()), files: z.number().int(), ci: z.array(z.string()) }),
    readme: z.object({ path: z.string(), title: z.string().nullable(), summary: z.string() }).nullable(),
    git: z
      .object({
        commits: z.number().int(),
        contributors: z.array(z.object({ name: z.string(), commits: z.number().int() })),
        most_changed: z.array(z.object({ path: z.string(), changes: z.number().int() })),
        last_commit: z
          .object({ sha: z.string(), author: z.string(), date: z.string(), subject: z.string() })
          .nullable(),
      })
      .nullable(),
    secrets: z
      .array(z.object({ type: z.string(), path: z.string(), line: z.number().int() }))
      .describe('Possible secrets: type and location only, never the value.'),
    token_estimate: z.number().int(),
    truncated: z.boolean().describe('True when the file cap stopped the walk.'),
    duration_ms: z.number().int(),
    summary: z
      .object({
        text: z.string().nullable().describe('Null when the model could not be reached; `error` says why.'),
        lane: z.string(),
        provider: z.string().nullable(),
        error: z.string().optional(),
      })
      .optional()
      .describe('Only with `summary: true`.'),
  })
  .meta({ id: 'RepoReport' });
export type RepoReport = z.infer<typeof RepoReport>;
