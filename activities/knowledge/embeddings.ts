import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';

/**
 * Embeds texts with the configured provider (OpenAI protocol), in batches of 64.
 * @throws AppError service_unavailable (no provider), upstream_error, upstream_timeout
 */
export async function embedTexts(
  config: Config,
  texts: string[],
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<number[][]> {
  const base = config.openai.baseUrl;
  if (!base) throw new AppError('service_unavailable', 'No embeddings provider is configured.');
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += 64) {
    const batch = texts.slice(i, i + 64);
    const signal = AbortSignal.any([
      AbortSignal.timeout(opts.timeoutMs ?? 30_000),
      ...(opts.signal ? [opts.signal] : []),
    ]);
    let res: Response;
    try {
      res = await fetch(`${base.replace(/\/+$/, '')}/embeddings`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(config.openai.apiKey ? { authorization: `Bearer ${config.openai.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: config.openai.embeddingModel, input: batch }),
        signal,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const timeout = (err as Error).name === 'TimeoutError';
      throw new AppError(
        timeout ? 'upstream_timeout' : 'upstream_error',
        timeout ? 'The embeddings provider did not answer in time.' : 'The embeddings provider could not be reached.',
      );
    }
    if (!res.ok) throw new AppError('upstream_error', `The embeddings provider answered HTTP ${res.status}.`);
    const body = (await res.json().catch(() => null)) as {
      data?: Array<{ index?: number; embedding?: unknown }>;
    } | null;
    const data = body?.data;
    if (!Array.isArray(data) || data.length !== batch.length || !data.every((d) => d && typeof d === 'object'))
      throw new AppError('upstream_error', 'The embeddings provider sent a malformed answer.');
    const sorted = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    for (const d of sorted) {
      const v = d.embedding;
      if (!Array.isArray(v) || !v.length || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new AppError('upstream_error', 'The embeddings provider sent a malformed vector.');
      }
      out.push(v as number[]);
    }
  }
  return out;
}
