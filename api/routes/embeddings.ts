import { embedInputs } from '../../activities/knowledge/embeddings';
import { CreateEmbeddingRequest, EMBEDDING_MODEL, EmbeddingList } from '../../schema/embeddings';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { abortOnDisconnect, unlessClientGone } from './chat-shared';

/** Upstream calls one request makes at once (64 inputs each). */
const CONCURRENCY = 4;

/** A vector as OpenAI's base64 form: its float32 values, little-endian. */
function base64Vector(v: number[]): string {
  const f = new Float32Array(v);
  const bytes = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
  if (!isLittleEndian) bytes.swap32();
  return bytes.toString('base64');
}
const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The model of a request to a provider-backed route: its public id (the default) or the configured upstream model's
 * name; `what` names the route's work in the refusal. @throws AppError model_not_found
 */
export function providerModel(given: string | undefined, publicId: string, upstream: string, what: string): string {
  const model = given ?? publicId;
  if (model !== publicId && model !== upstream)
    throw new AppError(
      'model_not_found',
      `The model '${model}' does not exist here; ${what} use '${publicId}' (or leave model out).`,
    );
  return model;
}

/** The request's model name, checked. @throws AppError model_not_found */
export const embeddingModel = (config: Config, body: { model?: string }): string =>
  providerModel(body.model, EMBEDDING_MODEL, config.openai.embeddingModel, 'embeddings');

/**
 * OpenAI's embeddings answer for a request, from the configured provider (what the route and a batch line give).
 * @throws AppError model_not_found, and the provider's failures (upstream_*, rate_limited, service_unavailable)
 */
export async function answerEmbeddings(config: Config, body: CreateEmbeddingRequest, signal?: AbortSignal) {
  const model = embeddingModel(config, body);
  const input = body.input;
  const inputs =
    typeof input === 'string'
      ? [input]
      : typeof input[0] === 'number'
        ? [input as number[]]
        : (input as Array<string | number[]>);
  const { vectors, tokens } = await embedInputs(config, inputs, {
    signal,
    dimensions: body.dimensions,
    concurrency: CONCURRENCY,
    timeoutMs: 60_000,
  });
  if (body.dimensions !== undefined) {
    const wrong = vectors.find((v) => v.length !== body.dimensions);
    if (wrong)
      throw new AppError(
        'upstream_error',
        `The embeddings provider gave vectors of ${wrong.length} dimensions, not the ${body.dimensions} asked for (its model may not take dimensions).`,
      );
  }
  const base64 = body.encoding_format === 'base64';
  return {
    object: 'list' as const,
    data: vectors.map((v, index) => ({
      object: 'embedding' as const,
      index,
      embedding: base64 ? base64Vector(v) : v,
    })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

async function createEmbeddings(ctx: AppContext, body: CreateEmbeddingRequest) {
  embeddingModel(ctx.deps.config, body);
  ctx.state.usage = { lane: EMBEDDING_MODEL, promptTokens: 0, completionTokens: 0, estimated: false };
  const abort = abortOnDisconnect(ctx);
  const answer = await unlessClientGone(abort, () => answerEmbeddings(ctx.deps.config, body, abort.signal));
  ctx.state.usage.promptTokens = answer.usage.prompt_tokens;
  return answer;
}

/** OpenAI's embeddings endpoint over the configured embeddings provider (the one knowledge search uses). */
export function embeddingRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/embeddings',
      access: { scope: 'runtime:chat' },
      summary: `OpenAI-compatible embeddings ('${EMBEDDING_MODEL}': the provider and model knowledge search uses); float or base64.`,
      tags: ['models'],
      metered: true,
      conversation: true,
      body: CreateEmbeddingRequest,
      response: EmbeddingList,
      responses: {
        404: 'Unknown model (model_not_found).',
        429: 'The embeddings provider is rate limiting (Retry-After).',
        502: 'The embeddings provider failed, or gave vectors of another length than `dimensions`.',
        503: 'No embeddings provider is configured.',
        504: 'The embeddings provider timed out.',
      },
      example: { model: EMBEDDING_MODEL, input: ['first text', 'second text'] },
      handler: (ctx: AppContext, { body }) => createEmbeddings(ctx, body),
    }),
  ];
}
