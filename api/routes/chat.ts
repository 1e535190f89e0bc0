import { z } from 'zod';
import { feedbackSignal, recordFeedback } from '../../activities/store/feedback';
import { getSession, listSessions, type SessionRow } from '../../activities/store/sessions';
import { adjustSass, baseSass, profileFor } from '../../reasoning/surfaces-registry';
import {
  ChatCompletionRequest,
  ChatCompletionResponse,
  ChatFeedbackBody,
  FeedbackResponse,
  SessionDetail,
  SessionList,
  SessionListQuery,
} from '../../schema/chat';
import { notFound } from '../../schema/errors';
import { parseSurface, sessionSurface, type Surface } from '../../schema/surfaces';
import { principalOf, type AppContext } from '../context';
import { gatewayOf } from '../gateway';
import { defineRoute, type RouteSpec } from '../route';
import { chatCommonsRoutes } from './chat-commons';
import { chatLaneRoutes } from './chat-lanes';
import { preparePersonaCall } from './chat-persona';
import { keeperFor, storedCompletionRoutes } from './chat-stored';
import { citationsIn, searchForChat, withSearchResults } from './chat-search';
import { unlessClientGone } from './chat-shared';
import { ChatHeaders } from '../../schema/headers';
import { answerChat, answerShape } from './chat-answer';
import { readChatCompletionRequest, readChatHeaders } from '../../schema/chat-read';

const CHAT = { scope: 'runtime:chat' } as const;
const UPSTREAM = {
  429: 'The upstream provider is rate limiting (Retry-After).',
  502: 'The upstream provider failed.',
  503: 'No model provider is configured.',
  504: 'The upstream provider timed out.',
};

function sessionOut(r: SessionRow) {
  return {
    id: r.session_key,
    surface: r.surface || null,
    title: r.title,
    message_count: r.message_count,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** `?surface=` when valid, else X-Svc-Context (android and mobile included: sessions are scoped to them); undefined = any surface. */
function surfaceFilter(ctx: AppContext, query: string | undefined): string | undefined {
  return (
    sessionSurface(query, parseSurface(query)) ||
    sessionSurface(ctx.get('X-Svc-Context') || undefined, ctx.state.surface as Surface | undefined) ||
    undefined
  );
}

async function completions(ctx: AppContext, body: ChatCompletionRequest, headers: ChatHeaders) {
  const { lane, models, req, abort, meta, store, tap, toolsOffered } = await preparePersonaCall(ctx, body, headers);
  // web_search_options: the results go before the lane, the answer's links to them become annotations.
  const search = body.web_search_options
    ? await unlessClientGone(abort, () => searchForChat(ctx, body, abort.signal)).catch((err: unknown) => {
        tap?.end();
        throw err;
      })
    : undefined;
  if (search) withSearchResults(req, search);
  return answerChat(ctx, {
    ...answerShape(body),
    models,
    req,
    abort,
    lane,
    meta: search
      ? (provider) => ({
          ...meta(provider),
          web_search: { query: search.query, results: search.results.map(({ title, url }) => ({ title, url })) },
        })
      : meta,
    onComplete: store,
    tap,
    toolsOffered,
    keep: keeperFor(ctx, body),
    annotate: search ? (content) => citationsIn(content, search) : undefined,
  });
}

async function feedback(ctx: AppContext, body: z.output<typeof ChatFeedbackBody>) {
  const p = principalOf(ctx);
  const surface = ctx.state.surface as Surface | undefined;
  const { id } = await recordFeedback(ctx.deps.db, {
    tenantId: p.tenantId,
    surface: surface ?? '',
    profile: body.profile,
    sessionKey: body.session_id,
    prompt: body.prompt,
    response: body.response,
    sass: body.sass,
    roast: body.roast,
    lesson: body.lesson,
  });
  // This replica sees its own feedback at once; the others drop the tenant's signals on the NOTIFY.
  gatewayOf(ctx.deps).feedback.invalidateTenant(p.tenantId);
  // The factor a chat with this profile would now get (an unknown profile counts as none, as in chat).
  const profile = profileFor(surface, body.profile);
  const signal = await feedbackSignal(ctx.deps.db, {
    tenantId: p.tenantId,
    surface: surface ?? '',
    profile: profile?.id,
  });
  return {
    ok: true as const,
    id,
    surface: surface ?? null,
    sass_factor: adjustSass(baseSass(surface, profile?.def), signal),
  };
}

function feedbackRoute(path: string, summary: string): RouteSpec {
  return defineRoute({
    method: 'post',
    path,
    access: CHAT,
    summary,
    tags: ['chat'],
    body: ChatFeedbackBody,
    response: FeedbackResponse,
    example: {
      prompt: 'Plan my week',
      response: 'Here is a plan...',
      sass: 0.2,
      roast: 'Too flippant',
      lesson: 'Keep planning answers earnest',
    },
    handler: (ctx: AppContext, { body }) => feedback(ctx, body),
  });
}

/** Chat gateway: completions (JSON and SSE), feedback, sessions, plus the lane and commons routes. */
export function chatRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/chat/completions',
      access: CHAT,
      summary:
        'OpenAI-compatible chat completion through the persona, surface, profile and skills; SSE when stream is true.',
      tags: ['chat'],
      metered: true,
      conversation: true,
      body: ChatCompletionRequest,
      readBody: readChatCompletionRequest,
      headers: ChatHeaders,
      readHeaders: readChatHeaders,
      response: ChatCompletionResponse,
      produces: ['application/json', 'text/event-stream'],
      responses: { 404: 'Unknown model (model_not_found).', ...UPSTREAM },
      example: { model: 'svc-oracle', messages: [{ role: 'user', content: 'Hello' }], stream: false },
      handler: (ctx: AppContext, { body, headers }) => completions(ctx, body, headers),
    }),
    feedbackRoute(
      '/v1/chat/feedback',
      'Record feedback on an answer (sass 0..1, roast, lesson); it tunes later answers on the surface.',
    ),
    feedbackRoute('/v1/feedback', 'Persona feedback (same record as POST /v1/chat/feedback).'),
    defineRoute({
      method: 'get',
      path: '/v1/sessions',
      access: CHAT,
      summary: "List the tenant's chat sessions (newest first); filter with ?surface= or X-Svc-Context.",
      tags: ['chat'],
      query: SessionListQuery,
      response: SessionList,
      handler: async (ctx: AppContext, { query }) => {
        const rows = await listSessions(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          surface: surfaceFilter(ctx, query.surface),
          limit: query.limit,
          offset: query.offset,
        });
        return { object: 'list' as const, data: rows.map(sessionOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sessions/:id',
      access: CHAT,
      summary:
        'One chat session with its messages (surface from ?surface= or X-Svc-Context, else the latest with that id).',
      tags: ['chat'],
      params: z.object({ id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'not a session id') }),
      query: z.object({ surface: z.string().max(20).optional() }),
      response: SessionDetail,
      handler: async (ctx: AppContext, { params, query }) => {
        const row = await getSession(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          sessionKey: params.id,
          surface: surfaceFilter(ctx, query.surface),
        });
        if (!row) throw notFound('Session');
        return { ...sessionOut(row), messages: row.messages };
      },
    }),
    ...storedCompletionRoutes(),
    ...chatLaneRoutes(),
    ...chatCommonsRoutes(),
  ];
}
