import { z } from 'zod';
import { getBrowserState, type BrowserStateRow } from '../../activities/store/browser-states';
import {
  BrowserActionBody,
  BrowserCommandResponse,
  BrowserOpenBody,
  BrowserScreenshotBody,
  BrowserSnapshotQuery,
  BrowserStateLoadBody,
  BrowserStateSaveBody,
} from '../../schema/browser';
import { AppError, notFound } from '../../schema/errors';
import { browserCommand, sessionOr404, actionCommand } from '../browser-client';
import { closeSession, createSession } from '../browser-sessions';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

const BrowserState = z
  .object({
    id: z.string(),
    object: z.literal('browser.state'),
    name: z.string(),
    encrypted: z.boolean(),
    origins: z.number(),
    cookies: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'BrowserState' });

function stateView(r: BrowserStateRow): z.infer<typeof BrowserState> {
  return {
    id: r.id,
    object: 'browser.state',
    name: r.name,
    encrypted: r.encrypted,
    origins: r.origins,
    cookies: r.cookies,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** An error's detail naming a session the request opened and could not close (the client owns it now). */
const sessionDetail = (id: string) => ({
  path: 'session_id',
  message: `${id}: opened for this request and still open (use it, or DELETE /v1/browser/sessions/${id})`,
});

const COMMON = {
  404: 'No such session (or another tenant’s).',
  409: 'The session has ended, or a ref is stale (take a fresh snapshot).',
  503: 'No browser worker available.',
};

export function browserCommandRoutes(): RouteSpec[] {
  const access = 'key' as const;
  const tags = ['browser'];
  return [
    defineRoute({
      method: 'post',
      path: '/v1/browser/open',
      access,
      tags,
      // A retry with the same Idempotency-Key gets the first answer (without it, a lost answer would open another session).
      idempotent: true,
      body: BrowserOpenBody,
      response: BrowserCommandResponse,
      responses: {
        ...COMMON,
        400: 'Invalid body, or a refused URL (non-http(s) scheme, private or metadata address).',
        429: 'Without session_id: the session cap is reached (see Retry-After).',
        502: 'The page could not be loaded.',
        504: 'The page did not load in time.',
      },
      summary:
        'Navigate a session to a URL (http(s) only, through the fetch guard) → { session_id, url, title, status, blocked }; `blocked` lists sub-requests the guard refused. Without session_id a new session (default options) is opened for it, and closed again if the page cannot be loaded.',
      example: { session_id: 'bse_...', url: 'https://example.com/', wait_until: 'load' },
      handler: async (ctx: AppContext, { body }) => {
        const open = { op: 'open' as const, url: body.url, waitUntil: body.wait_until, timeoutMs: body.timeout_ms };
        if (body.session_id !== undefined) {
          const row = await sessionOr404(ctx, body.session_id);
          return { session_id: row.id, ...(await browserCommand(ctx, row, open)) };
        }
        // The spec's open takes a url alone: a session is opened for it. A page that fails leaves no session behind;
        // a session that could not be closed (or is still opening) is named in the error, so the client can use it.
        const created = await createSession(ctx, {});
        if (created.status !== 'open')
          throw new AppError(
            'service_unavailable',
            `The browser session ${created.id} opened for this URL is still ${created.status}: retry POST /v1/browser/open with its session_id shortly, or DELETE it.`,
            { headers: { 'Retry-After': '5' }, details: [sessionDetail(created.id)] },
          );
        try {
          return { session_id: created.id, ...(await browserCommand(ctx, await sessionOr404(ctx, created.id), open)) };
        } catch (err) {
          const closed = await closeSession(ctx, created.id).catch(() => undefined);
          if (closed?.status === 'closed' || !(err instanceof AppError)) throw err;
          throw new AppError(err.code, err.message, {
            scope: err.scope,
            headers: err.headers,
            details: [...(err.details ?? []), sessionDetail(created.id)],
            cause: err,
          });
        }
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/browser/snapshot',
      access,
      tags,
      query: BrowserSnapshotQuery,
      response: BrowserCommandResponse,
      responses: COMMON,
      summary:
        'Accessibility snapshot as compact text with element refs ([ref=e12]; iframe refs like f1e3) → { text, refs, token_estimate, truncated, chars }. ' +
        'ref= limits it to one element subtree, depth= limits depth, diff=true answers only changed lines.',
      handler: async (ctx: AppContext, { query }) => {
        const row = await sessionOr404(ctx, query.session_id);
        return browserCommand(ctx, row, {
          op: 'snapshot',
          ref: query.ref,
          depth: query.depth,
          maxChars: query.max_chars,
          diff: query.diff,
        });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/browser/action',
      access,
      tags,
      body: BrowserActionBody,
      response: BrowserCommandResponse,
      responses: { ...COMMON, 504: 'The element was not actionable in time.' },
      summary:
        'Interact: click, fill, type, press, select, check, uncheck, hover, scroll, wait_for, back, forward, reload, by ref (preferred) or selector → { ok, url, title, snapshot_diff? }. ' +
        'No JavaScript evaluation. A stale ref answers 409 with a fresh-snapshot hint.',
      example: { session_id: 'bse_...', action: 'click', ref: 'e12' },
      handler: async (ctx: AppContext, { body }) => {
        const row = await sessionOr404(ctx, body.session_id);
        return browserCommand(ctx, row, actionCommand(body));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/browser/screenshot',
      access,
      tags,
      body: BrowserScreenshotBody,
      response: BrowserCommandResponse,
      produces: ['application/json', 'image/png', 'image/jpeg'],
      responses: COMMON,
      summary:
        'Capture the viewport, the full page or one element (ref): binary with Accept: image/*, else JSON { format, bytes, data (base64) }.',
      handler: async (ctx: AppContext, { body }) => {
        const row = await sessionOr404(ctx, body.session_id);
        const shot = await browserCommand(ctx, row, {
          op: 'screenshot',
          fullPage: body.full_page,
          ref: body.ref,
          format: body.format,
          quality: body.quality,
        });
        const wanted = ctx.accepts('application/json', 'image/png', 'image/jpeg');
        if (typeof wanted === 'string' && wanted.startsWith('image/')) {
          ctx.type = body.format === 'png' ? 'image/png' : 'image/jpeg';
          return Buffer.from(String(shot.data), 'base64');
        }
        return shot;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/browser/state/save',
      access,
      tags,
      body: BrowserStateSaveBody,
      response: BrowserState,
      responses: COMMON,
      summary:
        'Save the session’s cookies, localStorage and IndexedDB under a name (replaces a state of that name); AES-GCM encrypted at rest when SVC_STATE_KEY is set.',
      handler: async (ctx: AppContext, { body }) => {
        const row = await sessionOr404(ctx, body.session_id);
        const res = await browserCommand(ctx, row, { op: 'state-save', name: body.name });
        return stateView(res.state as BrowserStateRow);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/browser/state/load',
      access,
      tags,
      body: BrowserStateLoadBody,
      response: BrowserCommandResponse,
      responses: { ...COMMON, 404: 'No such session or saved state (or another tenant’s).' },
      summary:
        'Replace the session’s cookies, localStorage and IndexedDB with a saved state (by name or state_id) and reload the page.',
      handler: async (ctx: AppContext, { body }) => {
        const row = await sessionOr404(ctx, body.session_id);
        const st = await getBrowserState(
          ctx.deps.db,
          principalOf(ctx).tenantId,
          body.state_id ? { id: body.state_id } : { name: body.name },
        );
        if (!st) throw notFound('Saved browser state');
        return browserCommand(ctx, row, { op: 'state-load', stateId: st.id });
      },
    }),
  ];
}
