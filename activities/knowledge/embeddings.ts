import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { postProvider } from '../providers/provider-post';

/** What one embeddings input is: text, or the token ids of a text (OpenAI takes both). */
export type EmbeddingInput = string | number[];

/** Inputs one upstream call carries (the rest go in further calls). */
const BATCH = 64;

/**
 * Embeds inputs with the configured provider (OpenAI protocol, `OPENAI_BASE_URL`), BATCH inputs a call, up to
 * `concurrency` calls at once; vectors come back in the inputs' order, with the tokens the provider counted.
 * @throws AppError service_unavailable (no provider), rate_limited (its 429, with Retry-After), upstream_error,
 * upstream_timeout
 */
export async function embedInputs(
  config: Config,
  inputs: EmbeddingInput[],
  opts: { timeoutMs?: number; signal?: AbortSignal; dimensions?: number; concurrency?: number } = {},
): Promise<{ vectors: number[][]; tokens: number }> {
  if (!config.openai.baseUrl) throw new AppError('service_unavailable', 'No embeddings provider is configured.');
  const batches: EmbeddingInput[][] = [];
  for (let i = 0; i < inputs.length; i += BATCH) batches.push(inputs.slice(i, i + BATCH));
  const results: Array<{ vectors: number[][]; tokens: number }> = new Array(batches.length);
  // The first failure stops the calls still running: their answers would be thrown away.
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  let next = 0;
  const lane = async () => {
    while (next < batches.length && !stop.signal.aborted) {
      const i = next++;
      results[i] = await embedBatch(config, batches[i], { ...opts, signal }).catch((err: unknown) => {
        stop.abort();
        throw err;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 1, batches.length) }, lane));
  return {
    vectors: results.flatMap((r) => r.vectors),
    tokens: results.reduce((n, r) => n + r.tokens, 0),
  };
}

async function embedBatch(
  config: Config,
  batch: EmbeddingInput[],
  opts: { timeoutMs?: number; signal?: AbortSignal; dimensions?: number },
): Promise<{ vectors: number[][]; tokens: number }> {
  const payload = {
    model: config.openai.embeddingModel,
    input: batch,
    ...(opts.dimensions !== undefined ? { dimensions: opts.dimensions } : {}),
  };
  const body = (await postProvider(config, '/embeddings', payload, 'embeddings', opts)) as {
    data?: Array<{ index?: number; embedding?: unknown }>;
    usage?: { prompt_tokens?: unknown };
  } | null;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== batch.length || !data.every((d) => d && typeof d === 'object'))
    throw new AppError('upstream_error', 'The embeddings provider sent a malformed answer.');
  const sorted = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const vectors = sorted.map((d) => {
    const v = d.embedding;
    if (!Array.isArray(v) || !v.length || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new AppError('upstream_error', 'The embeddings provider sent a malformed vector.');
    }
    return v as number[];
  });
  const counted = body?.usage?.prompt_tokens;
  const tokens =
    typeof counted === 'number' && Number.isSafeInteger(counted) && counted >= 0
      ? counted
      : batch.reduce((n, x) => n + (typeof x === 'string' ? Math.ceil(x.length / 4) : x.length), 0);
  return { vectors, tokens };
}

/**
 * Embeds texts with the configured provider (OpenAI protocol), in batches of 64, one call at a time.
 * @throws AppError as embedInputs
 */
export async function embedTexts(
  config: Config,
  texts: string[],
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<number[][]> {
  return (await embedInputs(config, texts, opts)).vectors;
}
