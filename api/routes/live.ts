import { computeAeci, computeEri } from '../../activities/live/formulas';
import { WINDOW_MINUTES } from '../../activities/live/sample';
import { createFlowPrompt, dismissFlowPrompt, nextFlowPrompt } from '../../activities/store/flow';
import { dailyRange, latestSample } from '../../activities/store/live';
import { AppError } from '../../schema/errors';
import {
  AeciResponse,
  EriResponse,
  FlowDismissBody,
  FlowDismissResponse,
  FlowPromptResponse,
  FlowTriggerBody,
} from '../../schema/live';
import type { AppContext } from '../context';
import { buildAsyncApi } from '../live/asyncapi';
import { limitByAddress } from '../rate-limit';
import { defineRoute, type RouteSpec } from '../route';

/** More pending prompts than this and manual triggers are refused until some are dismissed. */
const MAX_PENDING = 100;
const RATE = { 429: 'Too many requests from this address (Retry-After says when to retry).' };

/** The current ERI: the latest sample the schedule stored, or the neutral state before the first one. */
export async function currentEri(ctx: AppContext) {
  const s = await latestSample(ctx.deps.db);
  const state =
    s?.state ?? computeEri({ sentiment: 0, sentimentN: 0, requestsPerMin: 0, jobsPerMin: 0, errorRate: 0 }, [], []);
  return { ...state, sampled_at: s?.sampledAt ?? null, window_minutes: WINDOW_MINUTES };
}

/** The AECI of the 7 UTC days ending today, from the stored daily aggregates. */
export async function currentAeci(ctx: AppContext, now = new Date()) {
  const end = now.toISOString().slice(0, 10);
  const start = new Date(now.getTime() - 6 * 86_400_000).toISOString().slice(0, 10);
  return computeAeci(await dailyRange(ctx.deps.db, start, end), end);
}

function manualPrompt(topic: string | undefined): string {
  return topic
    ? `Pause for a moment on "${topic}": what matters most about it right now, and what is one small next step?`
    : 'Pause for a moment: what has your attention right now, and is it where you want it to be?';
}

/** Public live-state routes: resonance (ERI), weekly climate (AECI) and reflection prompts. */
export function liveRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/asyncapi.json',
      access: 'public',
      summary: 'AsyncAPI 3 document of the WebSocket GET /v1/ws (frame and client-message schemas).',
      tags: ['live'],
      handler: (ctx: AppContext) => buildAsyncApi(ctx.deps.config.publicUrl ?? ctx.origin),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/ws',
      access: 'public',
      summary: 'WebSocket upgrade (101) to the live frames; see /v1/asyncapi.json. A plain GET answers 426.',
      tags: ['live'],
      responses: { 101: 'Switching protocols.', 426: 'Upgrade required.', 503: 'Connection cap reached (on upgrade).' },
      handler: (ctx: AppContext) => {
        ctx.set('Upgrade', 'websocket');
        ctx.status = 426;
        ctx.body = {
          error: 'Connect with a WebSocket client (Upgrade: websocket); frames are described at /v1/asyncapi.json.',
          code: 'upgrade_required',
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/eri',
      access: 'public',
      summary:
        'Live resonance state (ERI) with drift against the 24 h baseline; sampled once a minute by a Temporal schedule.',
      tags: ['live'],
      response: EriResponse,
      responses: RATE,
      handler: async (ctx: AppContext) => {
        await limitByAddress(ctx, 'read');
        return currentEri(ctx);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/aeci',
      access: 'public',
      summary: 'Weekly climate snapshot (AECI) from stored daily aggregates.',
      tags: ['live'],
      response: AeciResponse,
      responses: RATE,
      handler: async (ctx: AppContext) => {
        await limitByAddress(ctx, 'read');
        return currentAeci(ctx);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/flow/prompt',
      access: 'public',
      summary: 'The next pending reflection prompt, or { prompt: null, pending: 0 }.',
      tags: ['live'],
      response: FlowPromptResponse,
      responses: RATE,
      handler: async (ctx: AppContext) => {
        await limitByAddress(ctx, 'read');
        return nextFlowPrompt(ctx.deps.db);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/flow/trigger',
      access: 'public',
      summary: 'Manually fire a reflection trigger: stores a pending prompt.',
      tags: ['live'],
      body: FlowTriggerBody,
      response: FlowPromptResponse,
      status: 201,
      responses: { ...RATE, 409: `More than ${MAX_PENDING} prompts are pending.` },
      example: { topic: 'the launch plan' },
      handler: async (ctx: AppContext, { body }) => {
        await limitByAddress(ctx, 'write');
        const before = await nextFlowPrompt(ctx.deps.db);
        if (before.pending >= MAX_PENDING)
          throw new AppError('conflict', `${before.pending} reflection prompts are pending: dismiss some first.`);
        const prompt = await createFlowPrompt(ctx.deps.db, {
          trigger: 'manual',
          prompt: manualPrompt(body.topic),
          context: body.note ? { note: body.note } : {},
        });
        return { prompt, pending: before.pending + 1 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/flow/prompt/dismiss',
      access: 'public',
      summary: 'Dismiss a reflection prompt by id (dismissing twice is fine).',
      tags: ['live'],
      body: FlowDismissBody,
      response: FlowDismissResponse,
      responses: { ...RATE, 404: 'No prompt with this id.' },
      example: { id: 'flow_01J...' },
      handler: async (ctx: AppContext, { body }) => {
        await limitByAddress(ctx, 'write');
        const r = await dismissFlowPrompt(ctx.deps.db, body.id);
        if (r === 'missing') throw new AppError('not_found', `Reflection prompt ${body.id} not found.`);
        const { pending } = await nextFlowPrompt(ctx.deps.db);
        return { ok: true as const, id: body.id, already_dismissed: r === 'already', pending };
      },
    }),
  ];
}
