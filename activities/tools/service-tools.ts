import { createHash } from 'node:crypto';
import { z } from 'zod';
import { startJobWorkflow } from '../../api/start-workflow';
import { RESEARCH_DEPTHS, ResearchState } from '../../schema/research';
import { IngestBody, IngestResponse, SearchResponse, SOURCE_KINDS, SpaceId } from '../../schema/knowledge';
import { WebFetchBody, WebPage, WebSearchBody, WebSearchResponse } from '../../schema/web';
import { indexDocument } from '../knowledge/pipeline';
import { searchKnowledge } from '../knowledge/search';
import { createResearch, getResearch, researchView, updateResearch } from '../store/research';
import { fetchPage } from '../web/fetch-page';
import { searchEngines } from '../web/search-config';
import { webSearch } from '../web/web-search';
import { toolAppContext } from './context';
import { defineToolDef, type ToolDef } from './types';
import { waitSeconds } from '../../schema/common';
import { Filter, RankingOptions, SearchRequest, SearchResultsPage, VectorStoreId } from '../../schema/vector-stores';
import { resultsPage, searchableStores, searchVectorStores } from '../vector-stores/search';

const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** A stable record id from a durable caller's key: a retried plan step finds the record it wrote. */
export function idFromKey(prefix: string, key: string): string {
  return `${prefix}_${createHash('sha256').update(key).digest('base64url').slice(0, 24)}`;
}

const ResearchToolIn = z.object({
  query: z.string().trim().min(3).max(2000),
  depth: z.enum(['quick', 'standard', 'deep']).default('quick'),
  max_sources: z.number().int().min(1).max(20).optional(),
  wait_s: waitSeconds(
    'Wait this long for the report; 0 returns the job id at once (poll GET /v1/capabilities/research/{id}).',
  ),
});

/** Web, research, knowledge and memory tools: the same service functions their routes call. */
export const SERVICE_TOOLS: ToolDef[] = [
  defineToolDef({
    name: 'web_search',
    title: 'Web search',
    description: 'Search the web through the configured engines (same as POST /v1/capabilities/web-search).',
    input: WebSearchBody,
    output: WebSearchResponse,
    readOnly: true,
    destructive: false,
    external: true,
    scope: 'runtime:chat',
    group: 'web',
    run: (args, ctx) => webSearch(searchEngines(ctx.deps.config), args),
  }),
  defineToolDef({
    name: 'web_fetch',
    title: 'Web fetch',
    description:
      'Fetch a public URL through the fetch guard; main content as Markdown and text (same as POST /v1/capabilities/web-fetch).',
    input: WebFetchBody,
    output: WebPage,
    readOnly: true,
    destructive: false,
    external: true,
    scope: 'runtime:chat',
    group: 'web',
    run: (args, ctx) => {
      const { config, db } = ctx.deps;
      return fetchPage(
        { db, allowPrivate: config.allowPrivateFetch, cacheTtlSeconds: config.web.cacheTtlSeconds },
        ctx.principal.tenantId,
        args,
      );
    },
  }),
  defineToolDef({
    name: 'research',
    title: 'Research',
    description:
      'Start a durable research job (workflow research-<id>) and return its state; with wait_s, wait up to that long for the cited report.',
    input: ResearchToolIn,
    output: ResearchState,
    readOnly: true,
    destructive: false,
    external: true,
    scope: 'runtime:chat',
    group: 'web',
    run: async (args, ctx) => {
      const { db } = ctx.deps;
      const tenantId = ctx.principal.tenantId;
      const row = await createResearch(db, {
        tenantId,
        query: args.query,
        depth: args.depth,
        maxSources: args.max_sources ?? RESEARCH_DEPTHS[args.depth].sources,
      });
      await startJobWorkflow(toolAppContext(ctx), {
        workflow: 'researchWorkflow',
        workflowId: `research-${row.id}`,
        kind: 'research',
        tenantId,
        title: `Research: ${args.query.slice(0, 80)}`,
        args: [{ tenantId, jobId: row.id }],
        onStartFailed: () =>
          updateResearch(db, tenantId, row.id, { status: 'failed', error: 'The job could not be started.' }),
      });
      let state = researchView(row);
      const deadline = Date.now() + args.wait_s * 1000;
      while (!FINAL.has(state.status) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        const now = await getResearch(db, tenantId, row.id);
        if (now) state = researchView(now);
      }
      return state;
    },
  }),
  defineToolDef({
    name: 'knowledge_search',
    title: 'Knowledge search',
    description:
      "Search the tenant's knowledge store: ranked chunks with document references (same as GET /v1/enterprise/knowledge/search).",
    input: z.object({
      q: z.string().trim().min(1).max(500).describe('Words, "quoted phrases", OR, -excluded.'),
      limit: z.number().int().min(1).max(50).default(10),
      space_id: SpaceId.optional(),
      source_kind: z.enum(SOURCE_KINDS).optional(),
    }),
    output: SearchResponse,
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'knowledge',
    run: (args, ctx) =>
      searchKnowledge(ctx.deps, {
        tenantId: ctx.principal.tenantId,
        q: args.q,
        limit: args.limit,
        spaceId: args.space_id,
        sourceKind: args.source_kind,
      }),
  }),
  defineToolDef({
    name: 'vector_store_search',
    title: 'Vector store search',
    description:
      "Search one or more of the tenant's vector stores (same as POST /v1/vector_stores/{id}/search): chunks of their files ranked by full text and embeddings, filtered by file attributes, scores 0-1.",
    input: z.object({
      vector_store_ids: z.array(VectorStoreId).min(1).max(10),
      query: SearchRequest.shape.query,
      max_num_results: z.number().int().min(1).max(50).default(10),
      filters: Filter.optional(),
      ranking_options: RankingOptions.optional(),
    }),
    output: SearchResultsPage,
    readOnly: true,
    destructive: false,
    external: false,
    scope: 'runtime:chat',
    group: 'knowledge',
    run: async (args, ctx) => {
      const tenantId = ctx.principal.tenantId;
      await searchableStores(ctx.deps.db, tenantId, args.vector_store_ids, (k) => `vector_store_ids.${k}`);
      const queries = typeof args.query === 'string' ? [args.query] : args.query;
      const hits = await searchVectorStores(ctx.deps, {
        tenantId,
        storeIds: args.vector_store_ids,
        queries,
        limit: args.max_num_results,
        filter: args.filters,
        ranking: args.ranking_options,
      });
      return resultsPage(queries, hits);
    },
  }),
  defineToolDef({
    name: 'memory_write',
    title: 'Write memory',
    description: 'Remember text: one document, its chunks and one memory fragment per chunk (same as POST /v1/ingest).',
    input: IngestBody,
    output: IngestResponse,
    readOnly: false,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'knowledge',
    run: async (args, ctx) => {
      const r = await indexDocument(ctx.deps, {
        // A plan step's retry gets back the document its first attempt wrote.
        ...(ctx.idempotencyKey ? { id: idFromKey('doc', ctx.idempotencyKey) } : {}),
        tenantId: ctx.principal.tenantId,
        spaceId: args.space_id,
        sourceKind: 'ingest',
        title: args.title ?? (args.text.split('\n')[0].slice(0, 80).trim() || 'Note'),
        mediaType: 'text/plain',
        sizeBytes: Buffer.byteLength(args.text),
        text: args.text,
        memory: { kind: args.kind, provenance: 'told' },
      });
      return { document: r.document, chunks: r.chunks, memories: r.memories };
    },
  }),
];
