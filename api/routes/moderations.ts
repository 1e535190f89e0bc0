import { moderate } from '../../activities/providers/moderations';
import type { Config } from '../../schema/config';
import { CreateModerationRequest, MODERATION_MODEL, ModerationResponse } from '../../schema/moderations';
import type { AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { atPart, loadImageUrl } from './chat-parts';
import { abortOnDisconnect, unlessClientGone } from './chat-shared';
import { providerModel } from './embeddings';

/** The request's model name, checked. @throws AppError model_not_found */
export const moderationModel = (config: Config, body: { model?: string }): string =>
  providerModel(body.model, MODERATION_MODEL, config.openai.moderationModel, 'moderations');

/**
 * OpenAI's moderation answer for a request, from the configured provider (what the route answers and a batch line
 * gives). Image parts are loaded as chat loads them (fetch guard, type from the bytes, metadata dropped) and sent as
 * data URLs: the provider never fetches a URL the client chose.
 * @throws AppError model_not_found, a part's image refusal (naming it), and the provider's failures
 */
export async function answerModeration(config: Config, body: CreateModerationRequest, signal?: AbortSignal) {
  const model = moderationModel(config, body);
  const input = body.input;
  let sent: unknown = input;
  let expect = 1;
  if (Array.isArray(input) && input.every((x) => typeof x === 'string')) expect = input.length;
  else if (Array.isArray(input))
    sent = await Promise.all(
      input.map(async (part, i) => {
        if (typeof part === 'string' || part.type === 'text') return part;
        const url = await loadImageUrl(part.image_url.url, config).catch((err: unknown) =>
          Promise.reject(atPart(err, `body.input.${i}.image_url.url`)),
        );
        return { type: 'image_url', image_url: { url } };
      }),
    );
  const { id, results } = await moderate(config, sent, expect, { signal });
  return { id, model, results };
}

/** OpenAI's moderations endpoint over the configured provider's. */
export function moderationRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/moderations',
      access: { scope: 'runtime:chat' },
      summary: `OpenAI-compatible moderation ('${MODERATION_MODEL}': the provider's moderation model, SVC_MODERATION_MODEL); texts, or text and image parts.`,
      tags: ['models'],
      metered: true,
      conversation: true,
      body: CreateModerationRequest,
      response: ModerationResponse,
      responses: {
        404: 'Unknown model (model_not_found).',
        429: 'The moderation provider is rate limiting (Retry-After).',
        502: 'The moderation provider failed, has no moderation endpoint, or answered malformed.',
        503: 'No moderation provider is configured.',
        504: 'The moderation provider timed out.',
      },
      example: { model: MODERATION_MODEL, input: ['first text', 'second text'] },
      handler: async (ctx: AppContext, { body }) => {
        moderationModel(ctx.deps.config, body);
        ctx.state.usage = { lane: MODERATION_MODEL, promptTokens: 0, completionTokens: 0, estimated: false };
        const abort = abortOnDisconnect(ctx);
        return unlessClientGone(abort, () => answerModeration(ctx.deps.config, body, abort.signal));
      },
    }),
  ];
}
