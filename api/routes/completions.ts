import type {
  ModelRequest,
  ModelResult,
  ModelRouter,
  ModelStreamChunk,
  ModelUsage,
} from '../../activities/providers/types';
import { randomToken } from '../../activities/store/ids';
import { COMPLETION_DEFAULT_MAX_TOKENS, CompletionResponse, CreateCompletionRequest } from '../../schema/completions';
import type { AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { abortOnDisconnect, checkedLane, modelsFor, samplingOf, sumUsage, unlessClientGone } from './chat-shared';
import { startEventStream, streamError } from './chat-sse';

/** One choice to answer: its prompt and the lane call that continues it. */
interface Call {
  index: number;
  prompt: string;
  req: ModelRequest;
}

/** The legacy finish reasons (a lane's tool_calls or anything else reads as stop). */
const finishReason = (r: string | undefined) => (r === 'length' || r === 'content_filter' ? r : 'stop');

/** A chat choice's log probabilities (`{ content: [{ token, logprob, top_logprobs }] }`) in the legacy form. */
export function legacyLogprobs(
  chat: unknown,
  offset: number,
): { tokens: string[]; token_logprobs: number[]; top_logprobs: Array<Record<string, number>>; text_offset: number[] } {
  const content = ((chat as { content?: unknown } | undefined)?.content ?? []) as Array<{
    token?: unknown;
    logprob?: unknown;
    top_logprobs?: Array<{ token?: unknown; logprob?: unknown }>;
  }>;
  const out = {
    tokens: [] as string[],
    token_logprobs: [] as number[],
    top_logprobs: [] as Array<Record<string, number>>,
    text_offset: [] as number[],
  };
  let at = offset;
  for (const t of Array.isArray(content) ? content : []) {
    const token = typeof t.token === 'string' ? t.token : '';
    out.tokens.push(token);
    out.token_logprobs.push(typeof t.logprob === 'number' ? t.logprob : 0);
    out.top_logprobs.push(
      Object.fromEntries(
        (t.top_logprobs ?? [])
          .filter((a) => typeof a.token === 'string' && typeof a.logprob === 'number')
          .map((a) => [a.token as string, a.logprob as number]),
      ),
    );
    out.text_offset.push(at);
    at += token.length;
  }
  return out;
}

/** The lane calls of a request: each prompt `n` times (a seeded request's choice j sampled with seed + j). */
function callsOf(body: CreateCompletionRequest, signal: AbortSignal): Call[] {
  const prompts = typeof body.prompt === 'string' ? [body.prompt] : body.prompt;
  const n = body.n ?? 1;
  const sampling = samplingOf({
    temperature: body.temperature,
    top_p: body.top_p,
    max_tokens: body.max_tokens ?? COMPLETION_DEFAULT_MAX_TOKENS,
    stop: body.stop,
    presence_penalty: body.presence_penalty,
    frequency_penalty: body.frequency_penalty,
    seed: body.seed,
    user: body.user,
    logit_bias: body.logit_bias,
    logprobs: body.logprobs !== undefined ? true : undefined,
    top_logprobs: body.logprobs || undefined,
  });
  return prompts.flatMap((prompt, p) =>
    Array.from({ length: n }, (_x, j): Call => {
      const extra =
        typeof body.seed === 'number' && j > 0 ? { ...sampling.extra, seed: body.seed + j } : sampling.extra;
      return {
        index: p * n + j,
        prompt,
        req: { lane: body.model, messages: [{ role: 'user', content: prompt }], ...sampling, extra, signal },
      };
    }),
  );
}

/**
 * OpenAI's text completion for a request: its lane calls side by side, the first failure ending the others (what the
 * route answers and a batch line gives).
 * @throws AppError the lanes' failures (upstream_*, rate_limited, service_unavailable)
 */
export async function answerCompletion(models: ModelRouter, body: CreateCompletionRequest, signal: AbortSignal) {
  const stop = new AbortController();
  const calls = callsOf(body, AbortSignal.any([signal, stop.signal]));
  const results: ModelResult[] = await Promise.all(
    calls.map((c) =>
      models.complete(c.req).catch((err: unknown) => {
        stop.abort();
        throw err;
      }),
    ),
  );
  return {
    id: `cmpl-${randomToken(24)}`,
    object: 'text_completion' as const,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: calls.map((c, i) => {
      const head = body.echo ? c.prompt : '';
      return {
        text: head + results[i].content,
        index: c.index,
        logprobs: body.logprobs !== undefined ? legacyLogprobs(results[i].logprobs, head.length) : null,
        finish_reason: finishReason(results[i].finish_reason),
      };
    }),
    usage: results.map((r) => r.usage).reduce(sumUsage),
  };
}

/**
 * The choices as one stream of `text_completion` chunks (OpenAI's legacy stream: the same object as the answer, a
 * piece of text a chunk), each choice under its index as its call writes it, each ending with its finish reason, then
 * usage when asked for and `[DONE]`. Every call's first chunk is awaited before the status line, so a failure before
 * then is a proper error status; after it, a failure ends the stream with an error chunk.
 */
async function answerStream(ctx: AppContext, body: CreateCompletionRequest): Promise<void> {
  const abort = abortOnDisconnect(ctx);
  const stop = new AbortController();
  const calls = callsOf(body, AbortSignal.any([abort.signal, stop.signal]));
  const models = modelsFor(ctx);
  const its = calls.map((c) => models.stream(c.req)[Symbol.asyncIterator]());
  const firsts = await unlessClientGone(abort, () =>
    Promise.all(its.map((it) => it.next())).catch((err: unknown) => {
      stop.abort();
      throw err;
    }),
  );
  const out = startEventStream(ctx);
  const base = {
    id: `cmpl-${randomToken(24)}`,
    object: 'text_completion' as const,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
  };
  let closed = false;
  const write = (data: unknown) => {
    if (!closed) out.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  };
  abort.signal.addEventListener('abort', () => (closed = true), { once: true });
  const choice = (index: number, text: string, logprobs: unknown, finish: string | null) => ({
    ...base,
    choices: [{ text, index, logprobs, finish_reason: finish }],
  });
  const run = async () => {
    let usage: ModelUsage | undefined;
    try {
      await Promise.all(
        its.map(async (it, i) => {
          const { index, prompt } = calls[i];
          let offset = 0;
          if (body.echo) {
            write(choice(index, prompt, null, null));
            offset = prompt.length;
          }
          let next: IteratorResult<ModelStreamChunk> = firsts[i];
          let finish: string | undefined;
          while (!next.done && !closed) {
            const c = next.value;
            if (c.delta) {
              const lp = body.logprobs !== undefined ? legacyLogprobs(c.logprobs, offset) : null;
              write(choice(index, c.delta, lp, null));
              offset += c.delta.length;
            }
            if (c.finish_reason) finish = c.finish_reason;
            if (c.usage) usage = usage ? sumUsage(usage, c.usage) : c.usage;
            next = await it.next();
          }
          write(choice(index, '', null, finishReason(finish)));
        }),
      );
      if (!closed && body.stream_options?.include_usage && usage) write({ ...base, choices: [], usage });
    } catch (err) {
      stop.abort();
      if (!closed) write({ error: streamError(ctx, err) });
    } finally {
      if (closed) await Promise.all(its.map((it) => it.return?.(undefined).catch(() => undefined)));
      write('[DONE]');
      closed = true;
      out.end();
    }
  };
  void run();
}

/** OpenAI's legacy text completions over the model lanes (no persona, memory or tools). */
export function completionRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/completions',
      access: { scope: 'runtime:chat' },
      summary:
        "OpenAI's legacy text completion on a lane (the prompt sent as the user's message, no persona, memory or tools); SSE when stream is true.",
      tags: ['utility lanes'],
      metered: true,
      conversation: true,
      body: CreateCompletionRequest,
      response: CompletionResponse,
      produces: ['application/json', 'text/event-stream'],
      responses: {
        404: 'Unknown model (model_not_found).',
        429: 'The upstream provider is rate limiting (Retry-After).',
        502: 'The upstream provider failed.',
        503: 'No model provider is configured.',
        504: 'The upstream provider timed out.',
      },
      example: { model: 'mid', prompt: 'Once upon a time', max_tokens: 32 },
      handler: async (ctx: AppContext, { body }) => {
        checkedLane(modelsFor(ctx), body.model);
        if (body.stream) return answerStream(ctx, body);
        const abort = abortOnDisconnect(ctx);
        return unlessClientGone(abort, () => answerCompletion(modelsFor(ctx), body, abort.signal));
      },
    }),
  ];
}
