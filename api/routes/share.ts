import { z } from 'zod';
import { renderShareContent, SHARE_PAGE_HEADERS, sharePage } from '../../activities/knowledge/share-page';
import { createShare, getSharePage, listShares } from '../../activities/store/shares';
import { PageQuery } from '../../schema/knowledge';
import { ShareBody, ShareList, ShareRecord } from '../../schema/shares';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

/**
 * Public origin of share pages: SVC_PUBLIC_URL without a trailing /v1, else the configured
 * listen address (http://HOST:PORT). Never the request's Host header: the public page is
 * cacheable, and a forged Host would otherwise put an attacker's origin into a cached og:url.
 */
function publicBase(ctx: AppContext): string {
  const { publicUrl, host, port } = ctx.deps.config;
  const configured = publicUrl?.replace(/\/+$/, '').replace(/\/v1$/, '');
  if (configured) return configured;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

const access = 'key' as const;
const tags = ['shares'];

/** Share links (any runtime key of the tenant) and the public page GET /share/:id (no key, no /v1). */
export function shareRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/share',
      access,
      tags,
      summary: 'Create a permanent public share link for an artifact (markdown or HTML, sanitised on render).',
      body: ShareBody,
      status: 201,
      response: ShareRecord,
      example: { title: 'Q3 plan', content: '# Q3 plan\n\n- ship the beta', format: 'markdown' },
      handler: async (ctx: AppContext, { body }) => {
        const html = renderShareContent(body.content, body.format);
        const row = await createShare(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...body, html });
        return { ...row, url: `${publicBase(ctx)}/share/${row.id}` };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/shares',
      access,
      tags,
      summary: 'Your recent shares, newest first.',
      query: PageQuery,
      response: ShareList,
      handler: async (ctx: AppContext, { query }) => {
        const page = await listShares(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          limit: query.limit,
          offset: query.offset,
        });
        const base = publicBase(ctx);
        return {
          ...page,
          data: page.data.map((s) => ({ ...s, url: `${base}/share/${s.id}` })),
          limit: query.limit,
          offset: query.offset,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/share/:id',
      access: 'public',
      tags,
      summary: 'Public HTML render of a share (no key; unknown id answers a 404 page).',
      // Any string: the lookup decides (an over-long or malformed id is just an unknown share, a 404 page).
      params: z.object({ id: z.string() }),
      produces: ['text/html'],
      responses: { 404: 'Unknown share (an HTML page).' },
      handler: async (ctx: AppContext, { params }) => {
        const row = await getSharePage(ctx.deps.db, params.id);
        for (const [k, v] of Object.entries(SHARE_PAGE_HEADERS)) ctx.set(k, v);
        ctx.type = 'text/html; charset=utf-8';
        if (!row) {
          ctx.status = 404;
          ctx.body = sharePage({
            title: 'Share not found',
            html: '<p>This shared page does not exist or was removed.</p>',
            status: 'missing',
          });
          return;
        }
        // Shared caches only when the page's URLs come from SVC_PUBLIC_URL, i.e. the deployment
        // declared its public origin; otherwise they name the listen address: private to the reader.
        ctx.set('Cache-Control', ctx.deps.config.publicUrl ? 'public, max-age=300' : 'private, max-age=300');
        ctx.status = 200;
        ctx.body = sharePage({
          title: row.title,
          html: row.html,
          url: `${publicBase(ctx)}/share/${row.id}`,
          createdAt: row.created_at,
        });
      },
    }),
  ];
}
