import { fetchPage } from '../../activities/web/fetch-page';
import { repoReport } from '../../activities/web/repo-report';
import { summariseRepo } from '../../activities/web/repo-summary';
import { searchEngines } from '../../activities/web/search-config';
import { webSearch } from '../../activities/web/web-search';
import { RepoReport, RepoReportBody, WebFetchBody, WebPage, WebSearchBody, WebSearchResponse } from '../../schema/web';
import { principalOf, type AppContext } from '../context';
import { modelsOf } from './chat-shared';
import { researchRoutes } from './capabilities-research';
import { defineRoute, type RouteSpec } from '../route';

const access = { scope: 'runtime:chat' } as const;
const tags = ['capabilities'];

/** Capabilities (scope runtime:chat): web-fetch, web-search, research, repo-report. */
export function capabilitiesRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/capabilities/web-fetch',
      access,
      tags,
      summary:
        'Fetch a public URL through the fetch guard and return its main content as Markdown and text (HTML, PDF, JSON, text), cached per URL.',
      body: WebFetchBody,
      response: WebPage,
      responses: {
        400: 'Invalid body, or the URL is refused (scheme, credentials, private/loopback/metadata address, on any redirect hop).',
        415: 'The URL returned binary content that is not a PDF.',
        502: 'The site answered an HTTP error or could not be reached.',
        504: 'The site did not answer in time.',
      },
      example: { url: 'https://example.com/article', format: 'markdown', max_tokens: 2000 },
      handler: async (ctx: AppContext, { body }) => {
        const { tenantId } = principalOf(ctx);
        const { config, db } = ctx.deps;
        return fetchPage(
          { db, allowPrivate: config.allowPrivateFetch, cacheTtlSeconds: config.web.cacheTtlSeconds },
          tenantId,
          body,
        );
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/capabilities/web-search',
      access,
      tags,
      summary:
        'Search the web through the configured engines (SearXNG, Brave, Tavily) in parallel; results merged by URL with rank fusion; intent-aware.',
      body: WebSearchBody,
      response: WebSearchResponse,
      responses: {
        400: 'Invalid body.',
        502: 'Every engine failed.',
        503: 'No search engine is configured (SVC_CONFIG search.engines).',
      },
      example: { query: 'temporal workflow versioning', max_results: 5 },
      handler: async (ctx: AppContext, { body }) => webSearch(searchEngines(ctx.deps.config), body),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/capabilities/repo-report',
      access,
      tags,
      summary:
        'Report on a repository (a folder inside SVC_REPO_ROOTS or a shallow-cloned http(s) git URL): languages, tree, manifests, tests/CI, README, git activity, secret locations, token estimate; with `summary: true` a model-written summary of the report.',
      body: RepoReportBody,
      response: RepoReport,
      responses: {
        400: 'Invalid body; a path outside SVC_REPO_ROOTS (symbolic links included); a refused git URL.',
        413: 'The clone is larger than the size limit.',
        502: 'The clone failed.',
        504: 'The clone took longer than the time limit.',
      },
      example: { repo: '/srv/repos/my-service' },
      handler: async (ctx: AppContext, { body }) => {
        principalOf(ctx);
        const { config } = ctx.deps;
        const report = await repoReport({ roots: config.web.repoRoots, allowPrivate: config.allowPrivateFetch }, body);
        if (body.summary) report.summary = await summariseRepo(modelsOf(ctx.deps), report);
        return report;
      },
    }),
    ...researchRoutes(),
  ];
}
