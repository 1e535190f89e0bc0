import type { ModelRequest, ModelRouter } from '../../activities/providers/types';
import type { AppContext } from '../context';
import type { TokenTap } from '../live/tokens';
import { completionBody, completionId, unlessClientGone } from './chat-shared';
import { sendChoicesStream, sendChunkStream } from './chat-sse';
import { recordStream, type Completion } from './chat-stored';

export interface AnswerOptions {
  models: ModelRouter;
  req: ModelRequest;
  abort: AbortController;
  lane: string;
  /** Choices to answer (OpenAI's `n`): each is its own lane call. */
  n: number;
  stream: boolean;
  includeUsage: boolean;
  id: string;
  /** The completion's `created` (seconds): when the request came. */
  created: number;
  meta: (provider: string) => Record<string, unknown>;
  /** Stores the answer of choice 0 (session); `calls`: its tool calls. */
  onComplete?: (content: string, provider: string, calls: number) => Promise<void>;
  tap?: TokenTap;
  toolsOffered?: boolean;
  /** Stores the whole completion (`store: true`) before the answer ends; a streamed one is gathered as it goes. */
  keep?: (completion: Completion) => Promise<void>;
  /** A choice's annotations from its text (web search citations). */
  annotate?: (content: string) => unknown[];
}

/**
 * The lane streams of a stored completion, each gathered as it passes, and the session's `onComplete` followed by
 * storing the completion they made (before the stream's last chunk).
 */
function keeping(o: AnswerOptions, streams: ReturnType<AnswerOptions['models']['stream']>[]) {
  const keep = o.keep;
  if (!keep) return { streams, onComplete: o.onComplete };
  const recorded = streams.map(recordStream);
  return {
    streams: recorded.map((r) => r.stream),
    onComplete: async (content: string, provider: string, calls: number) => {
      await o.onComplete?.(content, provider, calls);
      const [result, ...more] = recorded.map((r) => r.result(provider));
      await keep(
        completionBody({
          id: o.id,
          created: o.created,
          lane: o.lane,
          result,
          more,
          meta: o.meta(provider),
          toolsOffered: o.toolsOffered,
          annotate: o.annotate,
        }),
      );
    },
  };
}

/**
 * Calls the lane and answers in OpenAI's chat format: JSON, or a chunk stream. With `n` > 1 the lane is called `n`
 * times side by side (most OpenAI-compatible upstreams ignore `n`, so asking one call for several choices would
 * answer one), the first failure ending the others; usage is the calls' sum, what they cost.
 */
export async function answerChat(ctx: AppContext, o: AnswerOptions): Promise<unknown> {
  // One choice (nearly every request) takes the path it always took, with nothing added.
  if (o.n === 1 && o.stream) {
    const { streams, onComplete } = keeping(o, [o.models.stream(o.req)]);
    await unlessClientGone(o.abort, () => sendChunkStream(ctx, { ...o, stream: streams[0], onComplete }));
    return undefined;
  }
  const stop = new AbortController();
  const signal = o.n > 1 ? AbortSignal.any([o.abort.signal, stop.signal]) : o.req.signal;
  // Choice i of a seeded request is sampled with seed + i: reproducible, as a seed promises, yet n different
  // choices, as OpenAI's n gives (one seed for all would give n copies of one answer).
  const seed = o.req.extra?.seed;
  const reqFor = (i: number): ModelRequest => {
    if (o.n === 1) return o.req;
    if (typeof seed === 'number' && i > 0) return { ...o.req, signal, extra: { ...o.req.extra, seed: seed + i } };
    return { ...o.req, signal };
  };
  const common = {
    abort: o.abort,
    id: o.id,
    created: o.created,
    lane: o.lane,
    includeUsage: o.includeUsage,
    meta: o.meta,
    annotate: o.annotate,
  };
  if (o.stream) {
    const { streams, onComplete } = keeping(
      o,
      Array.from({ length: o.n }, (_x, i) => o.models.stream(reqFor(i))),
    );
    await unlessClientGone(o.abort, () =>
      sendChoicesStream(ctx, { ...common, onComplete, tap: o.tap, toolsOffered: o.toolsOffered, streams, stop }),
    );
    return undefined;
  }
  const [result, ...more] = await unlessClientGone(o.abort, () =>
    Promise.all(
      Array.from({ length: o.n }, (_x, i) =>
        o.models.complete(reqFor(i)).catch((err: unknown) => {
          stop.abort();
          throw err;
        }),
      ),
    ),
  ).catch((err: unknown) => {
    o.tap?.end();
    throw err;
  });
  o.tap?.push(result.content);
  try {
    await o.onComplete?.(result.content, result.provider, o.toolsOffered ? (result.tool_calls?.length ?? 0) : 0);
    const body = completionBody({
      id: o.id,
      created: o.created,
      lane: o.lane,
      result,
      more,
      meta: o.meta(result.provider),
      toolsOffered: o.toolsOffered,
      annotate: o.annotate,
    });
    await o.keep?.(body);
    return body;
  } finally {
    // The socket's subscribers hear the end once the session and the stored completion hold the answer.
    o.tap?.end();
  }
}

/** What a chat request's body says of how to answer: choices, stream, usage in the stream; and a new id. */
export function answerShape(body: {
  n?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
}): Pick<AnswerOptions, 'n' | 'stream' | 'includeUsage' | 'id' | 'created'> {
  return {
    n: body.n ?? 1,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    id: completionId(),
    created: Math.floor(Date.now() / 1000),
  };
}
