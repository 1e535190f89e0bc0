import { fetchDocument } from '../../activities/knowledge/web-fetch';
import { indexDocument, requireSpace } from '../../activities/knowledge/pipeline';
import { listMemories } from '../../activities/store/memories';
import {
  IngestBody,
  IngestResponse,
  IngestWebBody,
  MemoriesQuery,
  MemoryList,
  PageQuery,
} from '../../schema/knowledge';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

const access = 'key' as const;
const tags = ['memory'];

/** Memory and ingestion (any runtime key of the tenant): text and web pages into the knowledge store. */
export function memoryRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/ingest',
      access,
      tags,
      summary: 'Feed text into memory and knowledge: one document, its chunks and one memory fragment per chunk.',
      body: IngestBody,
      status: 201,
      response: IngestResponse,
      example: { text: 'Our refund window is 30 days from delivery.', title: 'Refund policy', kind: 'knowledge' },
      handler: async (ctx: AppContext, { body }) => {
        const { tenantId } = principalOf(ctx);
        const r = await indexDocument(ctx.deps, {
          tenantId,
          spaceId: body.space_id,
          sourceKind: 'ingest',
          title: body.title ?? (body.text.split('\n')[0].slice(0, 80).trim() || 'Note'),
          mediaType: 'text/plain',
          sizeBytes: Buffer.byteLength(body.text),
          text: body.text,
          memory: { kind: body.kind, provenance: 'told' },
        });
        return { document: r.document, chunks: r.chunks, memories: r.memories };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/ingest/web',
      access,
      tags,
      summary:
        'Fetch a public page (SSRF-guarded, size and time limits), extract its readable text and remember it as knowledge.',
      body: IngestWebBody,
      status: 201,
      response: IngestResponse,
      responses: {
        502: 'The page answered an error, was too large or could not be reached.',
        504: 'The page did not answer in time.',
      },
      example: { url: 'https://example.com/handbook' },
      handler: async (ctx: AppContext, { body }) => {
        const { tenantId } = principalOf(ctx);
        const { config } = ctx.deps;
        await requireSpace(ctx.deps.db, tenantId, body.space_id);
        const page = await fetchDocument(body.url, {
          allowPrivate: config.allowPrivateFetch,
          maxBytes: config.uploadLimit,
          timeoutMs: 15_000,
        });
        const r = await indexDocument(ctx.deps, {
          tenantId,
          spaceId: body.space_id,
          sourceKind: 'web',
          title: page.title ?? new URL(page.finalUrl).hostname,
          mediaType: page.mediaType,
          sizeBytes: page.body.length,
          text: page.text,
          provenance: { url: body.url, final_url: page.finalUrl },
          memory: { kind: 'knowledge', provenance: 'read' },
        });
        return { document: r.document, chunks: r.chunks, memories: r.memories };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/memories',
      access,
      tags,
      summary: 'Memory fragments, newest first.',
      query: MemoriesQuery,
      response: MemoryList,
      handler: async (ctx: AppContext, { query }) => {
        const page = await listMemories(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          kind: query.kind,
          limit: query.limit,
          offset: query.offset,
        });
        return { ...page, limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/memories/knowledge',
      access,
      tags,
      summary: 'Knowledge memories (kind knowledge, web pages read, and everything learned), newest first.',
      query: PageQuery,
      response: MemoryList,
      handler: async (ctx: AppContext, { query }) => {
        const page = await listMemories(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          knowledge: true,
          limit: query.limit,
          offset: query.offset,
        });
        return { ...page, limit: query.limit, offset: query.offset };
      },
    }),
  ];
}
