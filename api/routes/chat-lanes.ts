import { MODULE_REGISTRY, SKILL_REGISTRY, SURFACE_REGISTRY, surfacesOf } from '../../reasoning/surfaces-registry';
import { z } from 'zod';
import { ChatCompletionResponse, ModelList, ModelObject, ModulesResponse, UtilityChatRequest } from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { PublicLane } from '../../schema/model-config';
import { SURFACES } from '../../schema/surfaces';
import type { AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { answerChat, answerShape } from './chat-answer';
import { keeperFor } from './chat-stored';
import { abortOnDisconnect, modelsFor, modelsOf, samplingOf } from './chat-shared';
import { readUtilityChatRequest } from '../../schema/chat-read';

const MODELS = { scope: 'runtime:models' } as const;
const CHAT = { scope: 'runtime:chat' } as const;
const CLOUD: PublicLane[] = ['svc-oracle', 'mid', 'mid-strong', 'micro', 'nano'];
const SLM: PublicLane[] = ['slm-fast', 'slm-code', 'slm-reason'];
const CREATED = Math.floor(Date.parse('2026-04-25T00:00:00Z') / 1000);

function modelObjects(ctx: AppContext) {
  return modelsOf(ctx.deps)
    .lanes()
    .map((l) => ({ id: l.id, object: 'model' as const, created: CREATED, owned_by: 'svc', available: l.available }));
}

function modelList(ctx: AppContext, only?: PublicLane[]) {
  return {
    object: 'list' as const,
    data: modelObjects(ctx).filter((m) => !only || only.includes(m.id as PublicLane)),
  };
}

/** Which model ids a utility route serves (the first is its default). */
export function laneFor(route: string, lanes: PublicLane[], model: string | undefined): PublicLane {
  const lane = (model ?? lanes[0]) as PublicLane;
  if (!lanes.includes(lane)) {
    throw new AppError(
      'model_not_found',
      `The model '${model}' is not served on ${route}; use one of: ${lanes.join(', ')}.`,
    );
  }
  return lane;
}

/**
 * A utility lane: the request goes to the lane as given. No persona, memory, tools or surface
 * behaviour; streaming supported.
 */
function utilityRoute(path: string, lanes: PublicLane[], summary: string): RouteSpec {
  return defineRoute({
    method: 'post',
    path,
    access: CHAT,
    summary,
    tags: ['utility lanes'],
    metered: true,
    conversation: true,
    body: UtilityChatRequest,
    readBody: readUtilityChatRequest,
    response: ChatCompletionResponse,
    produces: ['application/json', 'text/event-stream'],
    responses: {
      404: `Model not served here (this route serves ${lanes.join(', ')}).`,
      502: 'Upstream failed.',
      503: 'No provider configured.',
      504: 'Upstream timed out.',
    },
    example: { model: lanes[0], messages: [{ role: 'user', content: 'Rewrite: teh cat sat' }] },
    handler: async (ctx: AppContext, { body }) => {
      const lane = laneFor(path, lanes, body.model);
      const models = modelsFor(ctx);
      const abort = abortOnDisconnect(ctx);
      const req = { lane, messages: body.messages, ...samplingOf(body), signal: abort.signal };
      const meta = (provider: string) => ({ provider, sass_factor: 0 });
      return answerChat(ctx, { ...answerShape(body), models, req, abort, lane, meta, keep: keeperFor(ctx, body) });
    },
  });
}

export function chatLaneRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/models',
      access: MODELS,
      summary: 'Public model lanes (OpenAI list format); upstream model ids are never shown.',
      tags: ['models'],
      response: ModelList,
      handler: (ctx: AppContext) => modelList(ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/models/:id',
      access: MODELS,
      summary: 'One public model lane (OpenAI model object); 404 model_not_found for any other id.',
      tags: ['models'],
      // The path segment as sent: any id that is not a lane is the 404 below, as OpenAI answers.
      params: z.object({ id: z.string().max(200) }),
      response: ModelObject,
      responses: { 404: 'No such model lane.' },
      handler: (ctx: AppContext, { params }) => {
        const model = modelObjects(ctx).find((m) => m.id === params.id);
        if (!model) {
          throw new AppError(
            'model_not_found',
            `The model '${params.id}' does not exist; GET /v1/models lists the lanes.`,
          );
        }
        return model;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/cloud/models',
      access: MODELS,
      summary: 'Stable cloud lane aliases.',
      tags: ['models'],
      response: ModelList,
      handler: (ctx: AppContext) => modelList(ctx, CLOUD),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/slm/models',
      access: MODELS,
      summary: 'Stable small-model lane aliases.',
      tags: ['models'],
      response: ModelList,
      handler: (ctx: AppContext) => modelList(ctx, SLM),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/modules',
      access: MODELS,
      summary:
        'Built-in skills and modules with the surfaces they are allowed on ("*" = also without a surface), and each surface\'s profiles.',
      tags: ['models'],
      response: ModulesResponse,
      handler: () => ({
        skills: Object.entries(SKILL_REGISTRY).map(([id, s]) => ({
          id,
          title: s.title,
          description: s.description,
          surfaces: surfacesOf(s.surfaces),
        })),
        modules: Object.entries(MODULE_REGISTRY).map(([id, m]) => ({
          id,
          title: m.title,
          description: m.description,
          surfaces: surfacesOf(m.surfaces),
        })),
        surfaces: SURFACES.map((id) => ({
          id,
          title: SURFACE_REGISTRY[id].title,
          profiles: Object.keys(SURFACE_REGISTRY[id].profiles),
        })),
      }),
    }),
    utilityRoute(
      '/v1/slm/chat/completions',
      SLM,
      'Direct small-model call (slm-fast default, slm-code, slm-reason); no persona, memory or tools; stream supported.',
    ),
    utilityRoute(
      '/v1/micro/chat/completions',
      ['micro', 'nano'],
      'Cheapest lane (micro = nano); no persona, memory or tools; stream supported.',
    ),
    utilityRoute(
      '/v1/mid/chat/completions',
      ['mid', 'mid-strong'],
      'Mid-quality lane (mid default, mid-strong); no persona, memory or tools; stream supported.',
    ),
  ];
}

export const SLM_LANES = SLM;
